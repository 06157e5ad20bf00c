import { describe, expect, it } from 'vitest';
import { testToolContext } from '../../core/test-tool-context.ts';
import { calculateTool } from './calculate.ts';
import { vaultGetTool, vaultSetTool } from './vault.ts';

const context = () => testToolContext();

describe('calculate', () => {
  it('evaluates arithmetic, functions and units', async () => {
    expect(await calculateTool.execute({ expression: '17 * 23' }, context())).toEqual({
      expression: '17 * 23',
      result: '391',
    });
    expect((await calculateTool.execute({ expression: 'sqrt(2)^2' }, context())).result).toBe('2');
    expect((await calculateTool.execute({ expression: '5 km to mile' }, context())).result).toMatch(
      /^3\.10685\d* mile$/,
    );
  });

  it('gives clear errors for bad expressions and refuses scope tricks', async () => {
    await expect(calculateTool.execute({ expression: '2 +* 3' }, context())).rejects.toThrow(
      /could not evaluate "2 \+\* 3"/,
    );
    await expect(calculateTool.execute({ expression: 'import({}, {})' }, context())).rejects.toThrow(
      /disabled/,
    );
    await expect(calculateTool.execute({ expression: 'evaluate("1+1")' }, context())).rejects.toThrow(
      /disabled/,
    );
    await expect(calculateTool.execute({ expression: 'f(x) = x^2' }, context())).rejects.toThrow(/function/);
  });
});

describe('vault', () => {
  it('keeps values per run and says which keys exist', async () => {
    const ctx = context();
    await vaultSetTool.execute({ key: 'a', value: { n: 1 } }, ctx);
    expect(await vaultGetTool.execute({ key: 'a' }, ctx)).toEqual({ key: 'a', value: { n: 1 } });
    await expect(vaultGetTool.execute({ key: 'b' }, ctx)).rejects.toThrow(/no vault entry "b"; keys: a/);
    await expect(vaultGetTool.execute({ key: 'a' }, context())).rejects.toThrow(/empty/);
  });
});
