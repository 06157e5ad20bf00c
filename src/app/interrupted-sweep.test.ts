import { afterEach, describe, expect, it, vi } from 'vitest';
import { InterruptedSweep } from './interrupted-sweep.ts';

afterEach(() => vi.useRealTimers());

function counting(result: () => Promise<string[]> = async () => []) {
  let sweeps = 0;
  const runs = {
    markInterrupted: () => {
      sweeps++;
      return result();
    },
  };
  return { runs, count: () => sweeps };
}

describe('the interrupted-run sweep', () => {
  it('runs no timer until someone holds it, sweeps at once and then every period, and stops with the last release', async () => {
    vi.useFakeTimers();
    const { runs, count } = counting();
    const sweep = new InterruptedSweep(runs, 1_000);
    expect(sweep.running).toBe(false);
    const first = sweep.hold();
    const second = sweep.hold();
    expect(sweep.running).toBe(true);
    await vi.advanceTimersByTimeAsync(0);
    expect(count()).toBe(1);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(count()).toBe(4);
    first();
    first(); // a second release of the same hold changes nothing
    expect(sweep.running).toBe(true);
    second();
    expect(sweep.running).toBe(false);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(count()).toBe(4);
  });

  it('joins a sweep asked while one runs, and goes on after one that failed', async () => {
    let finish: () => void = () => {};
    let fail = true;
    const { runs, count } = counting(
      () =>
        new Promise<string[]>((resolve, reject) => {
          finish = () => (fail ? reject(new Error('database gone')) : resolve([]));
        }),
    );
    const sweep = new InterruptedSweep(runs);
    const [a, b] = [sweep.sweep(), sweep.sweep()];
    expect(count()).toBe(1);
    finish();
    await Promise.all([a, b]);
    fail = false;
    const c = sweep.sweep();
    expect(count()).toBe(2);
    finish();
    await c;
  });
});
