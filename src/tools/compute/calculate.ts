import type { MathJsInstance } from 'mathjs';
import { z } from 'zod';
import { defineTool } from '../../core/tool.ts';

let mathjs: Promise<{ math: MathJsInstance; evaluate: MathJsInstance['evaluate'] }> | undefined;

/** mathjs takes most of a second to load, so it is loaded on the first calculation, not at start-up. */
function loadMath() {
  mathjs ??= import('mathjs').then(({ create, all }) => {
    const math = create(all!, {});
    const evaluate = math.evaluate;
    // Expressions come from models: no importing, defining units or reaching the parser from inside.
    const disabled = (name: string) => () => {
      throw new Error(`${name} is disabled inside expressions`);
    };
    math.import(
      Object.fromEntries(
        ['import', 'createUnit', 'evaluate', 'parse', 'simplify', 'derivative'].map((name) => [
          name,
          disabled(name),
        ]),
      ),
      { override: true },
    );
    return { math, evaluate };
  });
  return mathjs;
}

const MAX_EXPRESSION_LENGTH = 2_000;

/** Evaluates a maths expression with mathjs: arithmetic, units, matrices, statistics. */
export const calculateTool = defineTool({
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
  async execute({ expression }) {
    const { math, evaluate } = await loadMath();
    let value: unknown;
    try {
      value = evaluate(expression, {});
    } catch (error) {
      throw new Error(`could not evaluate "${expression}": ${(error as Error).message}`);
    }
    if (typeof value === 'function') throw new Error(`"${expression}" is a function, not a value`);
    const result = math.format(value as never, { precision: 14 });
    return { expression, result };
  },
});
