/**
 * Plain arithmetic answered at once, without the mathjs worker: numbers, `+ - * / ^`, parentheses, the
 * usual functions and constants, evaluated with the same double-precision operations mathjs uses for
 * numbers and formatted as `math.format(value, RESULT_FORMAT)` does (a test compares the two over a
 * generated set). Anything else (units, matrices, implicit multiplication, `%`, complex results, a value
 * out of bounds) is not answered here: `undefined` sends it to mathjs, which has the final word.
 */

/** Longest expression this path reads; a longer one goes to mathjs (a short, hot path stays short). */
export const MAX_PLAIN_LENGTH = 200;
/** Deepest nesting of parentheses and function calls read here. */
const MAX_DEPTH = 24;
/** Largest magnitude of a number written in the expression (integers are exact below 2^53). */
const MAX_LITERAL = 1e15;
/** Largest magnitude of any value along the way; beyond it (or at Infinity) mathjs decides. */
const MAX_VALUE = 1e300;
/** Significant digits of the formatted result, as the worker formats it. */
const PRECISION = 14;
/**
 * How every result is formatted (here and by mathjs in the worker): 14 significant digits, and plain
 * notation from 1e-7 up to 1e15 (350826, not mathjs's default 3.50826e+5), so the card and the model read
 * the number as a person writes it; only very large or very small values keep an exponent.
 */
export const RESULT_FORMAT = { precision: PRECISION, lowerExp: -7, upperExp: 15 } as const;

/** The constants mathjs knows by these names, as numbers. */
const CONSTANTS: Record<string, number> = {
  pi: Math.PI,
  PI: Math.PI,
  e: Math.E,
  E: Math.E,
  tau: 2 * Math.PI,
};

/**
 * Functions with mathjs's own number implementations; each returns NaN where mathjs would answer with a
 * complex number (sqrt(-1), log(-1), asin(2)), which sends the expression to mathjs.
 */
const FUNCTIONS: Record<string, { arity: number[]; apply: (...args: number[]) => number }> = {
  sqrt: { arity: [1], apply: (x) => (x >= 0 ? Math.sqrt(x) : Number.NaN) },
  cbrt: { arity: [1], apply: Math.cbrt },
  abs: { arity: [1], apply: Math.abs },
  exp: { arity: [1], apply: Math.exp },
  log: {
    arity: [1, 2],
    apply: (x, base) => {
      if (!(x >= 0) || (base !== undefined && !(base >= 0))) return Number.NaN;
      return base === undefined ? Math.log(x) : Math.log(x) / Math.log(base);
    },
  },
  log10: { arity: [1], apply: (x) => (x >= 0 ? Math.log10(x) : Number.NaN) },
  log2: { arity: [1], apply: (x) => (x >= 0 ? Math.log2(x) : Number.NaN) },
  sin: { arity: [1], apply: Math.sin },
  cos: { arity: [1], apply: Math.cos },
  tan: { arity: [1], apply: Math.tan },
  asin: { arity: [1], apply: Math.asin },
  acos: { arity: [1], apply: Math.acos },
  atan: { arity: [1], apply: Math.atan },
  atan2: { arity: [2], apply: Math.atan2 },
  sinh: { arity: [1], apply: Math.sinh },
  cosh: { arity: [1], apply: Math.cosh },
  tanh: { arity: [1], apply: Math.tanh },
  pow: { arity: [2], apply: power },
};

/** mathjs's `^` on numbers: a negative base to a fractional power is complex there (NaN here). */
function power(base: number, exponent: number): number {
  if (
    (base * base < 1 && exponent === Number.POSITIVE_INFINITY) ||
    (base * base > 1 && exponent === Number.NEGATIVE_INFINITY)
  )
    return 0;
  return base ** exponent;
}

/** Not this path's to answer. */
class Unsupported extends Error {}

/** The formatted result of a plain-arithmetic expression, or undefined when mathjs must evaluate it. */
export function evaluatePlainArithmetic(expression: string): string | undefined {
  if (expression.length > MAX_PLAIN_LENGTH) return undefined;
  try {
    return formatNumber(new Parser(expression).parse());
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
}

/** A recursive-descent reader with mathjs's precedence: `+ -` < `* /` < unary `- +` < `^` (right to left). */
class Parser {
  readonly #text: string;
  #at = 0;
  #depth = 0;

  constructor(text: string) {
    this.#text = text;
  }

  parse(): number {
    const value = this.#sum();
    this.#space();
    if (this.#at !== this.#text.length) throw new Unsupported();
    return value;
  }

  #sum(): number {
    let value = this.#product();
    for (;;) {
      const operator = this.#peek();
      if (operator !== '+' && operator !== '-') return value;
      this.#at++;
      const right = this.#product();
      value = checked(operator === '+' ? value + right : value - right);
    }
  }

  #product(): number {
    let value = this.#unary();
    for (;;) {
      const operator = this.#peek();
      if (operator !== '*' && operator !== '/') return value;
      this.#at++;
      // `**` is not mathjs's; `*=` and the like are assignments there.
      if (/[*/=]/.test(this.#text[this.#at] ?? '')) throw new Unsupported();
      const right = this.#unary();
      value = checked(operator === '*' ? value * right : value / right);
    }
  }

  #unary(): number {
    const sign = this.#peek();
    if (sign === '-' || sign === '+') {
      this.#at++;
      this.#enter();
      const value = this.#unary();
      this.#depth--;
      return sign === '-' ? checked(-value) : value;
    }
    return this.#power();
  }

  #power(): number {
    const base = this.#primary();
    if (this.#peek() !== '^') return base;
    this.#at++;
    this.#enter();
    const exponent = this.#unary();
    this.#depth--;
    return checked(power(base, exponent));
  }

  #primary(): number {
    const next = this.#peek();
    if (next === '(') {
      this.#at++;
      this.#enter();
      const value = this.#sum();
      this.#expect(')');
      this.#depth--;
      return value;
    }
    const number = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/.exec(this.#text.slice(this.#at));
    if (number) {
      this.#at += number[0].length;
      const value = Number(number[0]);
      if (!(Math.abs(value) <= MAX_LITERAL)) throw new Unsupported();
      this.#refuseImplicitProduct();
      return value;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.#text.slice(this.#at))?.[0];
    if (!name) throw new Unsupported();
    this.#at += name.length;
    if (this.#peek() === '(') {
      const fn = Object.hasOwn(FUNCTIONS, name) ? FUNCTIONS[name] : undefined;
      if (!fn) throw new Unsupported();
      this.#at++;
      this.#enter();
      const args = this.#arguments();
      this.#depth--;
      if (!fn.arity.includes(args.length)) throw new Unsupported();
      return checked(fn.apply(...args));
    }
    if (!Object.hasOwn(CONSTANTS, name)) throw new Unsupported();
    this.#refuseImplicitProduct();
    return CONSTANTS[name]!;
  }

  #arguments(): number[] {
    const args = [this.#sum()];
    while (this.#peek() === ',') {
      this.#at++;
      args.push(this.#sum());
    }
    this.#expect(')');
    return args;
  }

  /** `2 pi`, `2(3)`, `3 cm`: mathjs multiplies or reads units there; not this path's. */
  #refuseImplicitProduct(): void {
    const next = this.#peek();
    if (next !== undefined && /[A-Za-z_(0-9.]/.test(next)) throw new Unsupported();
  }

  #enter(): void {
    if (++this.#depth > MAX_DEPTH) throw new Unsupported();
  }

  #expect(character: string): void {
    if (this.#peek() !== character) throw new Unsupported();
    this.#at++;
  }

  /** The next character that is not a space or a tab (a newline separates statements in mathjs). */
  #peek(): string | undefined {
    this.#space();
    return this.#text[this.#at];
  }

  #space(): void {
    while (this.#text[this.#at] === ' ' || this.#text[this.#at] === '\t') this.#at++;
  }
}

/** A value in bounds, or not this path's: NaN (complex in mathjs), Infinity, or beyond `MAX_VALUE`. */
function checked(value: number): number {
  if (!(Math.abs(value) <= MAX_VALUE)) throw new Unsupported();
  return value;
}

/**
 * mathjs's `format(value, { precision: 14 })` for a finite number: 14 significant digits, rounded half
 * up on the decimal digits, plain notation for exponents -3 to 4 and `1.5e+5` outside, trailing zeros
 * dropped.
 */
export function formatNumber(value: number): string {
  const match = /^(-?)(\d+\.?\d*)(?:e([+-]?\d+))?$/.exec(String(value).toLowerCase());
  if (!match) throw new Unsupported();
  const [, sign = '', digits = '', power = '0'] = match;
  const dot = digits.indexOf('.');
  let exponent = Number(power) + (dot === -1 ? digits.length - 1 : dot - 1);
  let coefficients = digits.replace('.', '');
  const leading = /^0*/.exec(coefficients)![0].length;
  exponent -= leading;
  coefficients = coefficients.slice(leading).replace(/0*$/, '');
  let figures = [...coefficients].map(Number);
  if (figures.length === 0) {
    figures = [0];
    exponent++;
  }
  ({ figures, exponent } = roundDigits(figures, exponent));
  let text: string;
  if (exponent < RESULT_FORMAT.lowerExp || exponent >= RESULT_FORMAT.upperExp) {
    const [first, ...rest] = padded(figures);
    text = `${sign}${first}${rest.length ? `.${rest.join('')}` : ''}e${exponent >= 0 ? '+' : ''}${exponent}`;
  } else {
    let all: Array<number | string> = padded(figures);
    all = all.concat(Array(Math.max(0, exponent - all.length + 1)).fill(0));
    all = Array(Math.max(0, -exponent)).fill(0).concat(all);
    const point = Math.max(exponent, 0);
    if (point < all.length - 1) all.splice(point + 1, 0, '.');
    text = sign + all.join('');
  }
  // Trailing zeros after the point go, as in mathjs's "auto" notation.
  return text.replace(/((\.\d*?)(0+))($|e)/, (_match, _all, kept: string, _zeros, end: string) =>
    kept !== '.' ? kept + end : end,
  );
}

/** Rounds to `PRECISION` significant digits, half up, carrying into the exponent as mathjs does. */
function roundDigits(figures: number[], exponent: number): { figures: number[]; exponent: number } {
  const kept = figures.slice(0, PRECISION);
  if (figures.length > PRECISION && figures[PRECISION]! >= 5) {
    let at = PRECISION - 1;
    kept[at]!++;
    while (kept[at] === 10) {
      kept.pop();
      if (at === 0) {
        kept.unshift(0);
        exponent++;
        at++;
      }
      at--;
      kept[at]!++;
    }
  }
  return { figures: kept, exponent };
}

function padded(figures: number[]): number[] {
  return figures.length < PRECISION ? figures.concat(Array(PRECISION - figures.length).fill(0)) : figures;
}
