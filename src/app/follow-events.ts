import type { Store, StoredEvent } from '../store/store.ts';
import { sweepOf } from './interrupted-sweep.ts';
import type { LiveRuns } from './live-runs.ts';

/**
 * A live tree's events after a cursor (cursor = position + 1, the numbering the store uses), until it
 * ends or `signal` aborts. A tree that has already ended yields nothing here; the store has it.
 */
export async function* followLive(
  live: LiveRuns,
  userId: string,
  runId: string,
  options: { after?: number; signal?: AbortSignal } = {},
): AsyncGenerator<StoredEvent> {
  const tree = live.get(userId, runId);
  if (!tree) return;
  const queue: StoredEvent[] = [];
  let ended = false;
  const wakeUp = new Wakeup();
  const stop = live.follow(
    tree,
    (options.after ?? 0) - 1,
    (event, index) => {
      queue.push({ cursor: index + 1, event });
      wakeUp.wake();
    },
    () => {
      ended = true;
      wakeUp.wake();
    },
  );
  const onAbort = () => wakeUp.wake();
  options.signal?.addEventListener('abort', onAbort);
  // Read by index: a follower behind a wide tree holds thousands of events, and shifting each one off
  // the array's front moved all the others (12,000 events: ~185 ms of copying in one test).
  let head = 0;
  try {
    while (!options.signal?.aborted) {
      if (head < queue.length) {
        const next = queue[head++]!;
        if (head >= 1024 && head * 2 >= queue.length) {
          queue.splice(0, head);
          head = 0;
        }
        yield next;
        continue;
      }
      if (ended) return;
      await wakeUp.wait();
    }
  } finally {
    stop();
    options.signal?.removeEventListener('abort', onAbort);
  }
}

export interface StoredFollowOptions {
  after?: number;
  signal?: AbortSignal;
  /** How often the store is read while the tree runs, on a store that cannot announce writes (150 ms). */
  pollMs?: number;
  /** How often the tree's state is checked for an end without a `run-finish` (its process died); default 2 s. */
  stateEveryMs?: number;
}

/**
 * The events of a tree that runs in another process on the same store, read from the store as they are
 * written (the embedded mode's way to attach; the PostgreSQL mode is told by NOTIFY instead of asking).
 * It ends after the root's `run-finish`, or when the stored tree is no longer running (its process died
 * and the run was closed `interrupted`), or when `signal` aborts.
 */
export async function* followStored(
  runs: Store['runs'],
  userId: string,
  rootRunId: string,
  options: StoredFollowOptions = {},
): AsyncGenerator<StoredEvent> {
  // A store that announces writes wakes the follower; polling stays, slower, in case one is missed.
  const wakeUp = new Wakeup();
  const unwatch = runs.watch ? await runs.watch(rootRunId, () => wakeUp.wake()) : undefined;
  // The tree's process may die: while this follows, dead processes' runs are closed now and then, and
  // their closing events end the follow like any other.
  const release = sweepOf(runs).hold();
  // Watched, it waits for the store's word (NOTIFY, or the file's change) with no timer; else it reads.
  const pollMs = options.pollMs ?? (unwatch ? undefined : 150);
  const stateEveryMs = options.stateEveryMs ?? 2000;
  let after = options.after ?? 0;
  let lastStateCheck = Date.now();
  const onAbort = () => wakeUp.wake();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    while (!options.signal?.aborted) {
      const batch = await runs.events(userId, rootRunId, { after });
      for (const stored of batch) {
        after = stored.cursor;
        yield stored;
        const { event } = stored;
        if (event.type === 'run-finish' && event.runId === rootRunId) return;
      }
      if (batch.length) continue;
      if (Date.now() - lastStateCheck >= stateEveryMs) {
        lastStateCheck = Date.now();
        if (!(await stillRunning(runs, userId, rootRunId))) {
          // Whatever the process wrote before it ended is read once more, then the stream ends.
          for (const stored of await runs.events(userId, rootRunId, { after })) yield stored;
          return;
        }
      }
      // Woken by a write announced meanwhile (kept while the store was read), a stop, or the poll. A tree
      // whose process died ends for its followers when the sweep they hold writes its closing events.
      await wakeUp.wait(pollMs);
    }
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    unwatch?.();
    release();
  }
}

/**
 * Whether the stored tree is still recorded as running. A read only: runs of a process that died are
 * closed by the sweep (`InterruptedSweep`), which a follower holds while it follows.
 */
export async function stillRunning(runs: Store['runs'], userId: string, rootRunId: string): Promise<boolean> {
  const tree = await runs.getRunTree(userId, rootRunId);
  return tree?.status === 'running';
}

/**
 * A promise a producer resolves to wake one waiting consumer. A wake while nobody waits is kept for the
 * next wait (which then returns at once), so a wake that comes while the consumer is busy is not lost.
 */
export class Wakeup {
  #resolve: (() => void) | undefined;
  #woken = false;
  /** Resolves on the next wake (or at once for one that came meanwhile), or after `timeoutMs` if given. */
  wait(timeoutMs?: number): Promise<void> {
    if (this.#woken) {
      this.#woken = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const timer = timeoutMs === undefined ? undefined : setTimeout(() => this.wake(), timeoutMs);
      this.#resolve = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
  wake(): void {
    const resolve = this.#resolve;
    this.#resolve = undefined;
    if (resolve) resolve();
    else this.#woken = true;
  }
}
