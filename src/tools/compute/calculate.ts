import { z } from 'zod';
import { defineTool } from '../../core/tool.ts';
import { evaluateInWorker, type MathLimits } from './math-pool.ts';

const MAX_EXPRESSION_LENGTH = 2_000;

/** A `calculate` tool with its own bounds (time, memory, result size); `calculateTool` uses the defaults. */
export function createCalculateTool(limits: Partial<MathLimits> = {}) {
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
    // In a worker with capped memory and time (math-pool.ts), so no expression can stop or freeze the process;
    // code in run_js reaches this same function through callTool.
    async execute({ expression }, context) {
      const result = await evaluateInWorker(expression, { limits, signal: context.signal });
      return { expression, result };
    },
  });
}

/** Evaluates a maths expression with mathjs: arithmetic, units, matrices, statistics. */
export const calculateTool = createCalculateTool();
