import { describe, expect, it } from 'vitest';
import {
  evaluatePlainArithmetic,
  formatNumber,
  MAX_PLAIN_LENGTH,
  RESULT_FORMAT,
} from './plain-arithmetic.ts';
import { createSafeMath } from './safe-math.ts';

// The worker's own mathjs, to compare with.
const math = createSafeMath();
const byMathjs = (expression: string): string | Error => {
  try {
    const value = math.evaluate(expression, {});
    return math.format(value as never, RESULT_FORMAT);
  } catch (error) {
    return error as Error;
  }
};

/** A small deterministic generator (mulberry32), so a failure names an expression that fails again. */
function random(seed: number) {
  let state = seed;
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  return { next, pick };
}

const UNARY = ['sqrt', 'cbrt', 'abs', 'exp', 'log', 'log10', 'log2', 'sin', 'cos', 'tan'] as const;
const MORE_UNARY = ['asin', 'acos', 'atan', 'sinh', 'cosh', 'tanh'] as const;
const BINARY = ['atan2', 'pow', 'log'] as const;

/** Random expressions of the plain-arithmetic grammar, with the odd space, sign and tricky literal. */
function expressions(count: number, seed: number): string[] {
  const { next, pick } = random(seed);
  const literal = () =>
    pick([
      () => String(Math.floor(next() * 1000)),
      () => (next() * 100).toFixed(Math.floor(next() * 6)),
      () => `${Math.floor(next() * 9) + 1}e${Math.floor(next() * 30) - 15}`,
      () => `.${Math.floor(next() * 1000)}`,
      () => pick(['0', '0.1', '0.2', '0.3', '1e15', '123456789012345', '99999.99999999999', '2.', '1E3']),
      () => pick(['pi', 'e', 'tau', 'PI', 'E']),
    ])();
  const term = (depth: number): string => {
    const choice = next();
    if (depth <= 0 || choice < 0.3) return literal();
    if (choice < 0.42) return `(${term(depth - 1)})`;
    if (choice < 0.5) return `-${term(depth - 1)}`;
    if (choice < 0.6) return `${pick([...UNARY, ...MORE_UNARY])}(${term(depth - 1)})`;
    if (choice < 0.65) return `${pick(BINARY)}(${term(depth - 1)}, ${term(depth - 1)})`;
    const space = next() < 0.5 ? ' ' : '';
    return `${term(depth - 1)}${space}${pick(['+', '-', '*', '/', '^', '*', '+'])}${space}${term(depth - 1)}`;
  };
  return Array.from({ length: count }, () => term(4));
}

describe('plain arithmetic without the worker', () => {
  it('gives exactly what mathjs gives, over 4,000 generated expressions', () => {
    let answered = 0;
    const generated = expressions(4_000, 24);
    for (const expression of generated) {
      const plain = evaluatePlainArithmetic(expression);
      if (plain === undefined) continue;
      answered++;
      expect({ expression, result: plain }).toEqual({ expression, result: byMathjs(expression) });
    }
    // Most of the grammar is answered here; what is not (complex or huge values) went to mathjs.
    expect(answered).toBeGreaterThan(generated.length * 0.6);
  });

  it('formats every kind of number as mathjs does at 14 digits', () => {
    const { next } = random(7);
    const values = [0, -0, 1, -1, 0.1 + 0.2, 1 / 3, 2 / 3, 99_999.5, 99_999.99999999999, 100_000, 123_456];
    values.push(0.001, 0.000999, 0.00099999999999999, 1e21, 1e-7, 5e-324, 1.7976931348623157e308);
    values.push(350_826, 350_826.2, 123_456_789_012, 999_999_999_999_999, 1e15, 1e-8);
    for (let i = 0; i < 2_000; i++) values.push((next() - 0.5) * 10 ** Math.floor(next() * 40 - 20));
    for (const value of values)
      expect([value, formatNumber(value)]).toEqual([value, math.format(value, RESULT_FORMAT)]);
  });

  it('reads mathjs precedence: unary minus below ^, ^ from the right', () => {
    expect(evaluatePlainArithmetic('-2^2')).toBe('-4');
    expect(evaluatePlainArithmetic('2^-2')).toBe('0.25');
    expect(evaluatePlainArithmetic('2^3^2')).toBe('512');
    expect(evaluatePlainArithmetic(' 17 * 23 ')).toBe('391');
    expect(evaluatePlainArithmetic('log(8, 2) + sqrt(16)')).toBe('7');
  });

  it('leaves to mathjs what is not plain arithmetic, or out of its bounds', () => {
    for (const expression of [
      '5 km to mile', // units
      '2 pi', // implicit multiplication
      '2(3)',
      '[1, 2] * 3', // matrices
      '5 % 3', // mod or percent
      '3!',
      'sqrt(-4)', // complex in mathjs
      '(-8)^(1/3)',
      'asin(2)',
      '1/0', // Infinity
      '10^400', // past the magnitude bound
      '1e16 + 1', // a literal past the bound
      'round(2.5)', // functions with mathjs's own rounding rules
      'x = 2',
      'f(x) = x^2',
      '2 +* 3', // an error: mathjs words it
      '2 ** 3',
      '1\n2',
      `${'('.repeat(30)}1${')'.repeat(30)}`, // deeper than the bound
      `1${'+1'.repeat(MAX_PLAIN_LENGTH)}`, // longer than the bound
      'constructor(1)',
      'toString',
    ])
      expect([expression, evaluatePlainArithmetic(expression)]).toEqual([expression, undefined]);
  });
});
