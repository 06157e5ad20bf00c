/** A deadline set on the clock: `cancel` once the work it bounds has ended in time. */
export interface Deadline {
  cancel(): void;
}

interface Entry extends Deadline {
  at: number;
  expire: () => void;
  /** Expired or cancelled. */
  done: boolean;
}

/** setTimeout's longest delay; a longer one would fire at once (Node warns and uses 1 ms). */
const LONGEST_DELAY_MS = 2 ** 31 - 1;
/** Node's timers fire on whole milliseconds: a deadline this close to now is due. */
const SLACK_MS = 1;

/**
 * Wall-clock deadlines for every run and model call of the process on one timer. Each model call (eight in
 * a scripted delegation) and each run used to start its own: a `setTimeout` with an abort listener per call,
 * `AbortSignal.timeout` with `AbortSignal.any` per run (measured with `--cpu-prof`: about 0.1 ms of a
 * delegation's 3 ms, and a run's timer stayed pending until it fired, long after the run had ended).
 * Most deadlines are cancelled long before they are due, so the one timer is set for the earliest deadline
 * and, when it fires, expires what is due and is set again for the earliest one left; cancelling is only
 * forgetting the entry. The timer never keeps the process running, as a call's own limit never did.
 */
export class DeadlineClock {
  #entries = new Set<Entry>();
  #timer: NodeJS.Timeout | undefined;
  /** When the timer fires (performance.now() time), or Infinity without one. */
  #timerAt = Number.POSITIVE_INFINITY;

  /** Calls `expire` once, `ms` from now, unless cancelled first; no deadline when `ms` is not finite. */
  after(ms: number, expire: () => void): Deadline {
    const entries = this.#entries;
    const entry: Entry = {
      at: performance.now() + ms,
      expire,
      done: false,
      cancel: () => {
        entry.done = true;
        entries.delete(entry);
      },
    };
    if (!Number.isFinite(ms)) return entry;
    entries.add(entry);
    if (entry.at < this.#timerAt) this.#setTimer(entry.at);
    return entry;
  }

  /** Deadlines set and not yet expired or cancelled. */
  get pending(): number {
    return this.#entries.size;
  }

  #setTimer(at: number): void {
    clearTimeout(this.#timer);
    this.#timerAt = at;
    const delay = Math.min(LONGEST_DELAY_MS, Math.max(0, at - performance.now()));
    this.#timer = setTimeout(() => this.#fire(), delay);
    this.#timer.unref();
  }

  #fire(): void {
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    const now = performance.now() + SLACK_MS;
    const due: Entry[] = [];
    let next = Number.POSITIVE_INFINITY;
    for (const entry of this.#entries) {
      if (entry.at <= now) due.push(entry);
      else if (entry.at < next) next = entry.at;
    }
    for (const entry of due) this.#entries.delete(entry);
    if (next < Number.POSITIVE_INFINITY) this.#setTimer(next);
    for (const entry of due) {
      // An earlier handler may have cancelled it.
      if (entry.done) continue;
      entry.done = true;
      try {
        entry.expire();
      } catch {
        // One deadline's handler failing must not keep the others from expiring.
      }
    }
  }
}

/** The process's clock, shared by every runtime in it. */
export const deadlines = new DeadlineClock();

/** A signal with a deadline: see deadlineSignal. */
export interface DeadlineSignal {
  signal: AbortSignal;
  /** True once the deadline passed (rather than the caller cancelling). */
  readonly expired: boolean;
  /** Called when the deadline passes, after `signal` aborts. */
  onExpire(listener: () => void): void;
  /** The work ended: forget the deadline and the caller's signal. */
  clear(): void;
}

/**
 * A signal aborted by the caller's signal or, with a `TimeoutError` saying `message`, after `ms`: a deadline
 * on the shared clock and one listener rather than `AbortSignal.timeout` plus `AbortSignal.any`, which keep
 * composite signals alive until they fire.
 */
export function deadlineSignal(parent: AbortSignal | undefined, ms: number, message: string): DeadlineSignal {
  const controller = new AbortController();
  let expired = false;
  let onExpire: (() => void) | undefined;
  const forward = () => controller.abort(parent?.reason);
  const deadline = deadlines.after(ms, () => {
    expired = true;
    controller.abort(new DOMException(message, 'TimeoutError'));
    onExpire?.();
  });
  if (parent?.aborted) controller.abort(parent.reason);
  else parent?.addEventListener('abort', forward, { once: true });
  return {
    signal: controller.signal,
    get expired() {
      return expired;
    },
    onExpire(listener: () => void) {
      onExpire = listener;
    },
    clear() {
      deadline.cancel();
      parent?.removeEventListener('abort', forward);
    },
  };
}

/**
 * A run's signals: `signal` aborts when `parent` does or `ms` pass, `timeoutSignal` only for the time limit
 * (so a timeout can be told from a cancellation). `release` once the run has ended.
 */
export function runSignals(
  parent: AbortSignal,
  ms: number,
): { signal: AbortSignal; timeoutSignal: AbortSignal; release(): void } {
  const run = deadlineSignal(parent, ms, 'The operation was aborted due to timeout');
  const timeout = new AbortController();
  run.onExpire(() => timeout.abort(run.signal.reason));
  return { signal: run.signal, timeoutSignal: timeout.signal, release: () => run.clear() };
}
