/**
 * "Something changed, look again", said to readers in this process and, where the backend can, in the
 * other processes on the same store (SQLite: a small file beside the database whose change the operating
 * system reports, `sqlite/file-signal.ts`; PostgreSQL: NOTIFY). It carries no data: the reader reads the
 * store, so a signal that comes for nothing costs one read and a missed one is never wrong for long.
 */
export interface ChangeSignal {
  /** Wakes every watcher, here and (where the backend can) in other processes. */
  announce(): void;
  /**
   * Calls `onChange` whenever it is announced, and once when watching has begun (so what was said while
   * it began, before another process could be heard, is looked for then); returns how to stop watching.
   */
  watch(onChange: () => void): () => void;
}

/** A signal heard in this process only (a store no other process shares: a database in memory). */
export class LocalSignal implements ChangeSignal {
  readonly #listeners = new Set<() => void>();

  announce(): void {
    for (const listener of [...this.#listeners]) listener();
  }

  watch(onChange: () => void): () => void {
    const own = () => onChange();
    this.#listeners.add(own);
    queueMicrotask(() => {
      if (this.#listeners.has(own)) own();
    });
    return () => {
      this.#listeners.delete(own);
    };
  }
}
