import { writeFileSync } from 'node:fs';
import type { ChangeSignal } from '../sql/change-signal.ts';
import { onFileChange } from './file-changes.ts';

/**
 * A signal to the processes on one SQLite file, with no timer: listeners in this process are called at
 * once; other processes are told through a small file beside the database (`cadre.db-<name>`), whose
 * change the operating system reports to each watcher (inotify, FSEvents). What changed is in the
 * database; this only says "look now". Stop requests use `cadre.db-stops`, chat lists `cadre.db-lists`.
 */
export class FileSignal implements ChangeSignal {
  #file: string | undefined;
  #listeners = new Set<() => void>();
  #unwatch: (() => void) | undefined;

  /** For the database at `location` (none: an in-memory database, one process only). */
  constructor(location: string | undefined, name: string) {
    this.#file = location ? `${location}-${name}` : undefined;
  }

  /** Wakes every watcher, here and in other processes. */
  announce(): void {
    for (const listener of [...this.#listeners]) listener();
    if (this.#file) writeFileSync(this.#file, `${process.pid} ${Date.now()}\n`, { mode: 0o600 });
  }

  /** Calls `onChange` whenever the signal is announced, and once now; returns how to stop watching. */
  watch(onChange: () => void): () => void {
    const own = () => onChange();
    this.#listeners.add(own);
    // Our own announcement comes back too: the listeners were called already, once more is harmless.
    if (this.#file && !this.#unwatch)
      this.#unwatch = onFileChange(this.#file, () => {
        for (const listener of [...this.#listeners]) listener();
      });
    // Watching has begun (the folder's watcher is set up at once): a first look, as every signal gives.
    queueMicrotask(() => {
      if (this.#listeners.has(own)) own();
    });
    return () => {
      this.#listeners.delete(own);
      if (this.#listeners.size) return;
      this.#unwatch?.();
      this.#unwatch = undefined;
    };
  }
}
