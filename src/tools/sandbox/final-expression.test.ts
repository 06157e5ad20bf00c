import { describe, expect, it } from 'vitest';
import { returnFinalExpression } from './final-expression.ts';

describe('returnFinalExpression', () => {
  it('returns the last statement when it is an expression, wherever its line breaks fall', () => {
    expect(returnFinalExpression('const r = await f();\nr * 2')).toBe(
      'const r = await f();\n\nreturn (\nr * 2\n);',
    );
    expect(returnFinalExpression('const r = await f()\nr.value\n  .toFixed(2);\n\n')).toMatch(
      /\nreturn \(\nr\.value\n {2}\.toFixed\(2\)\n\);$/,
    );
    expect(returnFinalExpression('const a = await f() +\n  1\na')).toMatch(/return \(\na\n\);$/);
    expect(returnFinalExpression('for (const x of xs) { await g(x) }\nxs.length')).toMatch(
      /return \(\nxs\.length\n\);$/,
    );
  });

  it('is not fooled by brackets, semicolons and line breaks inside strings, templates, comments or regexes', () => {
    const code = [
      'const s = "a; b\\"}";',
      `const t = \`x \${ await f({ a: ";" }) } y\n;\`;`,
      '// a comment; }',
      '/* more; { */',
      'const re = /[;}]\\//g;',
      '({ s, t, re: String(re) })',
    ].join('\n');
    expect(returnFinalExpression(code)).toMatch(/return \(\n\(\{ s, t, re: String\(re\) \}\)\n\);$/);
  });

  it('leaves code that ends in a declaration, a return or a block as it is', () => {
    expect(returnFinalExpression('const r = await f();\nreturn r')).toBeUndefined();
    expect(returnFinalExpression('const r = await f();')).toBeUndefined();
    expect(returnFinalExpression('if (await f()) { g() }')).toBeUndefined();
    expect(returnFinalExpression('const o = { a: await f() };')).toBeUndefined();
    expect(returnFinalExpression('const s = "unterminated')).toBeUndefined();
  });
});
