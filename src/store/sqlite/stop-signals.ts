import { writeFileSync } from 'node:fs';
import { onFileChange } from './file-changes.ts';

/**
 * Stop requests announced to the processes running trees on one SQLite file, with no timer: listeners in
 * this process are called at once; other processes are told through a small file beside the database
 * (`cadre.db-stops`), whose change the operating system reports to each watcher (inotify, FSEvents). The
 * request itself is the `run_stop_requests` row; this only says "look now".
 */
export class StopSignals {
  #file: string | undefined;
  #listeners = new Set<() => void>();
  #unwatch: (() => void) | undefined;

  /** For the database at `location` (none: an in-memory database, one process only). */
  constructor(location: string | undefined) {
    this.#file = location ? `${location}-stops` : undefined;
  }

  /** Wakes every watcher, here and in other processes. */
  announce(): void {
    for (const listener of this.#listeners) listener();
    if (this.#file) writeFileSync(this.#file, `${process.pid} ${Date.now()}\n`, { mode: 0o600 });
  }

  /** Calls `onRequest` whenever a stop may have been asked; returns how to stop watching. */
  watch(onRequest: () => void): () => void {
    this.#listeners.add(onRequest);
    // Our own announcement comes back too: the listeners were called already, once more is harmless.
    if (this.#file && !this.#unwatch)
      this.#unwatch = onFileChange(this.#file, () => {
        for (const listener of this.#listeners) listener();
      });
    return () => {
      this.#listeners.delete(onRequest);
      if (this.#listeners.size) return;
      this.#unwatch?.();
      this.#unwatch = undefined;
    };
  }
}
