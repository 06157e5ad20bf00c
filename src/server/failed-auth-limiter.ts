/**
 * Counts failed token checks per address in a one-minute window: past the limit an address is refused
 * (429) without its token being hashed, so guessing is slow and a flood of wrong tokens cannot keep the
 * CPU busy with scrypt. Addresses are forgotten when their window ends; the table is bounded.
 */
export class FailedAuthLimiter {
  readonly #perMinute: number;
  readonly #now: () => number;
  readonly #windows = new Map<string, { start: number; failures: number }>();

  constructor(options: { perMinute: number; now?: () => number }) {
    this.#perMinute = options.perMinute;
    this.#now = options.now ?? Date.now;
  }

  /** Seconds until `address` may try again, or undefined when it may now. */
  retryAfterSeconds(address: string): number | undefined {
    const window = this.#current(address);
    if (!window || window.failures < this.#perMinute) return undefined;
    return Math.max(1, Math.ceil((window.start + 60_000 - this.#now()) / 1000));
  }

  fail(address: string): void {
    const window = this.#current(address);
    if (window) {
      window.failures += 1;
      return;
    }
    if (this.#windows.size >= 10_000) {
      // Ended windows first; a table still full of live ones starts over rather than grow.
      for (const [key, value] of this.#windows)
        if (this.#now() - value.start >= 60_000) this.#windows.delete(key);
      if (this.#windows.size >= 10_000) this.#windows.clear();
    }
    this.#windows.set(address, { start: this.#now(), failures: 1 });
  }

  #current(address: string) {
    const window = this.#windows.get(address);
    if (window && this.#now() - window.start >= 60_000) {
      this.#windows.delete(address);
      return undefined;
    }
    return window;
  }
}
