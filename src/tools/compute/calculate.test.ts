import { describe, expect, it } from 'vitest';
import { testToolContext } from '../../core/test-tool-context.ts';
import { calculateTool, createCalculateTool } from './calculate.ts';
import { idleMathWorkers } from './math-pool.ts';
import { vaultGetTool, vaultSetTool } from './vault.ts';

const context = (overrides: Parameters<typeof testToolContext>[0] = {}) => testToolContext(overrides);

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
    // Plain notation where it fits, for the card and the model: 350826.2, not 3.508262e+5 (issue 33).
    expect((await calculateTool.execute({ expression: '1234 * 284.3' }, context())).result).toBe('350826.2');
    expect((await calculateTool.execute({ expression: '350826 km to m' }, context())).result).toBe(
      '350826000 m',
    );
  });

  it('answers plain arithmetic without a worker, and boots one in the background when warmed', async () => {
    // A heap size of its own, so this tool's workers are told apart from other tests'.
    const tool = createCalculateTool({ memoryMb: 96 });
    expect((await tool.execute({ expression: '(17 * 23 - 1) / 2^3' }, context())).result).toBe('48.75');
    expect(idleMathWorkers(96)).toBe(0);
    tool.warm?.();
    tool.warm?.();
    expect(idleMathWorkers(96)).toBe(1);
    // The warmed worker answers the first expression plain arithmetic cannot, and waits for the next.
    expect((await tool.execute({ expression: '12 inch to cm' }, context())).result).toBe('30.48 cm');
    expect(idleMathWorkers(96)).toBe(1);
  });

  it('answers calls at once from the worker given back, instead of waiting for a second to boot', async () => {
    // A heap size of its own: this pool starts empty. The first call pays for a boot, as a yardstick.
    const tool = createCalculateTool({ memoryMb: 112 });
    let started = performance.now();
    expect((await tool.execute({ expression: '1 inch to cm' }, context())).result).toBe('2.54 cm');
    const boot = performance.now() - started;
    // Four at once: one takes the idle worker; the next boots another but takes the first given back.
    started = performance.now();
    const results = await Promise.all(
      [1, 2, 3, 4].map((n) => tool.execute({ expression: `${n} inch to cm` }, context())),
    );
    const four = performance.now() - started;
    expect(results.map((result) => result.result)).toEqual(['2.54 cm', '5.08 cm', '7.62 cm', '10.16 cm']);
    expect(four).toBeLessThan(boot / 2);
    // The worker booted meanwhile waits idle for the next calls, within the pool's bound.
    expect(idleMathWorkers(112)).toBe(2);
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

describe('calculate under hostile expressions', () => {
  it('stops an expression that would exhaust memory with a clear error, and keeps working', async () => {
    // On the main thread this one aborted the whole process with a fatal out-of-memory error. A generous time
    // limit here, so that on a loaded machine it is the memory cap that stops it.
    const patient = createCalculateTool({ timeoutMs: 60_000 });
    await expect(patient.execute({ expression: 'size(zeros(32000,32000))' }, context())).rejects.toThrow(
      /needs more than the calculator's 256 MB of memory and was stopped/,
    );
    // Factorials are mathjs's, so this goes to a new worker.
    expect((await patient.execute({ expression: '3! * 7' }, context())).result).toBe('42');
  });

  it('stops an expression that runs past its time limit, and keeps working', async () => {
    const quick = createCalculateTool({ timeoutMs: 300 });
    const started = performance.now();
    await expect(
      quick.execute({ expression: 'size(ones(1000,1000) * ones(1000,1000))' }, context()),
    ).rejects.toThrow(/took longer than the calculator's limit of 0.3 s and was stopped/);
    expect(performance.now() - started).toBeLessThan(3_000);
    expect((await quick.execute({ expression: 'sum(2^10)' }, context())).result).toBe('1024');
  });

  it('refuses a result too long to hand back, and ends when the run is cancelled', async () => {
    await expect(calculateTool.execute({ expression: 'ones(400,400)' }, context())).rejects.toThrow(
      /characters long, more than the limit of 100,000/,
    );
    const controller = new AbortController();
    const pending = calculateTool.execute(
      { expression: 'size(ones(1000,1000) * ones(1000,1000))' },
      context({ signal: controller.signal }),
    );
    setTimeout(() => controller.abort(new Error('run cancelled')), 100);
    await expect(pending).rejects.toThrow(/run cancelled/);
  });
});

describe('calculate cancelled early', () => {
  it('ends a call cancelled while its worker is still booting, without evaluating it', async () => {
    // A pool of its own, so the call has to boot a worker; a patient time limit, so only the cancel ends it.
    const tool = createCalculateTool({ memoryMb: 120, timeoutMs: 60_000 });
    const controller = new AbortController();
    const pending = tool.execute(
      { expression: 'size(ones(1000,1000) * ones(1000,1000))' },
      context({ signal: controller.signal }),
    );
    controller.abort(new Error('run cancelled'));
    await expect(pending).rejects.toThrow(/run cancelled/);
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
