import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeadlineClock, runSignals } from './deadline-clock.ts';

// The clock under test reads performance.now() and sets timers: both are faked, and time moves only when
// a test moves it, so "not before" and "once due" are exact instead of a sleep's guess.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});
const elapse = async (ms: number) => {
  await vi.advanceTimersByTimeAsync(ms);
};

describe('DeadlineClock', () => {
  it('expires each deadline once it is due, in order, and not before', async () => {
    const clock = new DeadlineClock();
    const expired: string[] = [];
    const started = performance.now();
    const at: Record<string, number> = {};
    const mark = (name: string) => () => {
      expired.push(name);
      at[name] = performance.now() - started;
    };
    clock.after(60, mark('late'));
    // Set after the later one: the clock's one timer moves earlier.
    clock.after(20, mark('early'));
    clock.after(40, mark('middle'));
    await elapse(10);
    expect(expired).toEqual([]);
    await elapse(100);
    expect(expired).toEqual(['early', 'middle', 'late']);
    expect(at.early).toBeGreaterThanOrEqual(19);
    expect(at.middle).toBeGreaterThanOrEqual(39);
    expect(at.late).toBeGreaterThanOrEqual(59);
    expect(clock.pending).toBe(0);
  });

  it('never expires a cancelled deadline, and keeps the others', async () => {
    const clock = new DeadlineClock();
    const expired: string[] = [];
    const first = clock.after(15, () => expired.push('first'));
    clock.after(30, () => expired.push('second'));
    first.cancel();
    expect(clock.pending).toBe(1);
    await elapse(60);
    expect(expired).toEqual(['second']);
  });

  it('skips a due deadline that an earlier handler cancelled, and survives a handler that throws', async () => {
    const clock = new DeadlineClock();
    const expired: string[] = [];
    let second: { cancel(): void } | undefined;
    clock.after(10, () => {
      expired.push('first');
      second?.cancel();
      throw new Error('a broken handler');
    });
    second = clock.after(10, () => expired.push('second'));
    clock.after(10, () => expired.push('third'));
    await elapse(40);
    expect(expired).toEqual(['first', 'third']);
  });

  it('sets no deadline for an unlimited time, and copes with one longer than a timer can wait', async () => {
    const clock = new DeadlineClock();
    const expired: string[] = [];
    clock.after(Number.POSITIVE_INFINITY, () => expired.push('never'));
    expect(clock.pending).toBe(0);
    // More than setTimeout's 2^31 - 1 ms, which Node would otherwise fire after 1 ms.
    const far = clock.after(40 * 24 * 3600 * 1000, () => expired.push('far'));
    await elapse(20);
    expect(expired).toEqual([]);
    far.cancel();
  });
});

describe('runSignals', () => {
  it('aborts the run, and only the run, when the caller cancels', () => {
    const caller = new AbortController();
    const signals = runSignals(caller.signal, 60_000);
    caller.abort(new Error('stop'));
    expect(signals.signal.aborted).toBe(true);
    expect((signals.signal.reason as Error).message).toBe('stop');
    expect(signals.timeoutSignal.aborted).toBe(false);
    signals.release();
  });

  it('aborts both signals with a TimeoutError when the time is up', async () => {
    const signals = runSignals(new AbortController().signal, 15);
    await elapse(50);
    expect(signals.timeoutSignal.aborted).toBe(true);
    expect(signals.signal.aborted).toBe(true);
    expect((signals.signal.reason as DOMException).name).toBe('TimeoutError');
    signals.release();
  });

  it('lets go of the caller and the clock once released', async () => {
    const caller = new AbortController();
    const signals = runSignals(caller.signal, 15);
    signals.release();
    caller.abort();
    await elapse(40);
    expect(signals.signal.aborted).toBe(false);
    expect(signals.timeoutSignal.aborted).toBe(false);
  });

  it('starts aborted when the caller already is', () => {
    const caller = new AbortController();
    caller.abort(new Error('too late'));
    const signals = runSignals(caller.signal, 60_000);
    expect(signals.signal.aborted).toBe(true);
    signals.release();
  });
});
