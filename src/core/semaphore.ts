/** Bounds how many sibling runs go at once; waiters leave the queue when their signal aborts. */
export class Semaphore {
  #available: number;
  #waiting: Array<() => void> = [];
  readonly capacity: number;

  constructor(capacity: number) {
    this.capacity = capacity;
    this.#available = capacity;
  }

  /** Permits free now. */
  get available(): number {
    return this.#available;
  }

  /** Callers waiting for a permit. */
  get waiting(): number {
    return this.#waiting.length;
  }

  async acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.#available > 0) {
      this.#available--;
      return this.#releaser();
    }
    await new Promise<void>((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        this.#waiting = this.#waiting.filter((waiter) => waiter !== grant);
        reject(signal?.reason);
      };
      this.#waiting.push(grant);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    return this.#releaser();
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      if (next) next();
      else this.#available++;
    };
  }
}
