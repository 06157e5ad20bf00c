import { z } from 'zod';
import { defineTool } from '../../core/tool.ts';
import { DEFAULT_MATH_LIMITS, evaluateInWorker, type MathLimits, warmMathWorker } from './math-pool.ts';
import { evaluatePlainArithmetic } from './plain-arithmetic.ts';

const MAX_EXPRESSION_LENGTH = 2_000;

/** A `calculate` tool with its own bounds (time, memory, result size); `calculateTool` uses the defaults. */
export function createCalculateTool(limits: Partial<MathLimits> = {}) {
  const maxResultChars = limits.maxResultChars ?? DEFAULT_MATH_LIMITS.maxResultChars;
  return defineTool({
    name: 'calculate',
    family: 'compute',
    description:
      'Evaluate a mathematical expression exactly (mathjs syntax): arithmetic, powers, sqrt, trig, log, ' +
      'units ("5 km to mile"), matrices, mean/median/std. Use it for any arithmetic instead of mental maths.',
    input: z.object({
      expression: z
        .string()
        .min(1)
        .max(MAX_EXPRESSION_LENGTH)
        .describe('The expression, e.g. "sqrt(2) * 3^4" or "12 inch to cm"'),
    }),
    // Plain arithmetic is answered at once (plain-arithmetic.ts, same results as mathjs); everything else in
    // a worker with capped memory and time (math-pool.ts), so no expression can stop or freeze the process.
    // Code in run_js reaches this same function through callTool.
    async execute({ expression }, context) {
      const plain = evaluatePlainArithmetic(expression);
      if (plain !== undefined && plain.length <= maxResultChars) return { expression, result: plain };
      const result = await evaluateInWorker(expression, { limits, signal: context.signal });
      return { expression, result };
    },
    // Booting mathjs takes most of a second: an agent that may call this starts it while its model thinks.
    warm() {
      warmMathWorker(limits);
    },
  });
}

/** Evaluates a maths expression: plain arithmetic at once, mathjs (units, matrices, statistics) in a worker. */
export const calculateTool = createCalculateTool();
