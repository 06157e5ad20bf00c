/**
 * Counts failed token checks per key (an address, a token id) in a one-minute window. Keys are
 * forgotten when their window ends; the table is bounded.
 */
export class FailedAuthLimiter {
  readonly #perMinute: number;
  readonly #now: () => number;
  readonly #windows = new Map<string, { start: number; failures: number }>();

  constructor(options: { perMinute: number; now?: () => number }) {
    this.#perMinute = options.perMinute;
    this.#now = options.now ?? Date.now;
  }

  /** Seconds until `key` is under the limit again, or undefined when it is now. */
  retryAfterSeconds(key: string): number | undefined {
    const window = this.#current(key);
    if (!window || window.failures < this.#perMinute) return undefined;
    return Math.max(1, Math.ceil((window.start + 60_000 - this.#now()) / 1000));
  }

  fail(key: string): void {
    const window = this.#current(key);
    if (window) {
      window.failures += 1;
      return;
    }
    if (this.#windows.size >= 10_000) {
      // Ended windows first; a table still full of live ones starts over rather than grow.
      for (const [name, value] of this.#windows)
        if (this.#now() - value.start >= 60_000) this.#windows.delete(name);
      if (this.#windows.size >= 10_000) this.#windows.clear();
    }
    this.#windows.set(key, { start: this.#now(), failures: 1 });
  }

  #current(key: string) {
    const window = this.#windows.get(key);
    if (window && this.#now() - window.start >= 60_000) {
      this.#windows.delete(key);
      return undefined;
    }
    return window;
  }
}

/** The id part of a `cadre_<id>_<secret>` token, read by its fixed width, or undefined for any other shape. */
export function tokenIdOf(token: string): string | undefined {
  return /^cadre_([A-Za-z0-9_-]{12})_[A-Za-z0-9_-]{43}$/.exec(token)?.[1];
}
