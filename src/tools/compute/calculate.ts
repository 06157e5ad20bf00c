import { all, create } from 'mathjs';
import { z } from 'zod';
import { defineTool } from '../../core/tool.ts';

const math = create(all!, {});
// Expressions come from models: no defining functions, importing or touching the parser's scope.
const limited = math.evaluate;
math.import(
  {
    import: () => {
      throw new Error('import is disabled');
    },
    createUnit: () => {
      throw new Error('createUnit is disabled');
    },
    evaluate: () => {
      throw new Error('evaluate is disabled inside expressions');
    },
    parse: () => {
      throw new Error('parse is disabled inside expressions');
    },
    simplify: () => {
      throw new Error('simplify is disabled inside expressions');
    },
    derivative: () => {
      throw new Error('derivative is disabled inside expressions');
    },
  },
  { override: true },
);

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
    let value: unknown;
    try {
      value = limited(expression, {});
    } catch (error) {
      throw new Error(`could not evaluate "${expression}": ${(error as Error).message}`);
    }
    if (typeof value === 'function') throw new Error(`"${expression}" is a function, not a value`);
    const result = math.format(value as never, { precision: 14 });
    return { expression, result };
  },
});
