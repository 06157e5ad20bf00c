import { abortableSleep } from '../../core/abortable-sleep.ts';
/**
 * Per-host token buckets. A request takes a token; when none is left it reserves the next one and waits
 * for it, so a burst is spread at the host's rate in arrival order. Clock and sleep are injected so the
 * schedule can be checked without waiting.
 */
export interface HostRate {
  /** Sustained requests per second. */
  perSecond: number;
  /** Requests allowed at once before spacing starts. */
  burst: number;
}

export interface RateLimiterOptions {
  /** Rate for hosts not listed in `hosts`. */
  defaultRate: HostRate;
  hosts?: Record<string, HostRate>;
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

interface Bucket {
  rate: HostRate;
  tokens: number;
  updatedAt: number;
}

export class RateLimiter {
  #buckets = new Map<string, Bucket>();
  #options: RateLimiterOptions;
  #now: () => number;
  #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;

  constructor(options: RateLimiterOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => performance.now());
    this.#sleep = options.sleep ?? abortableSleep;
  }

  /** Milliseconds the caller must wait before its request to `host`; the token is reserved already. */
  reserve(host: string): number {
    const bucket = this.#refilled(host);
    bucket.tokens -= 1;
    return bucket.tokens >= 0 ? 0 : (-bucket.tokens / bucket.rate.perSecond) * 1000;
  }

  /**
   * Takes a token for `host` only when one is there now and returns 0; otherwise takes nothing and
   * returns how long until one will be, for callers that would rather refuse than wait.
   */
  tryTake(host: string): number {
    const bucket = this.#refilled(host);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return ((1 - bucket.tokens) / bucket.rate.perSecond) * 1000;
  }

  #refilled(host: string): Bucket {
    const now = this.#now();
    let bucket = this.#buckets.get(host);
    if (!bucket) {
      const rate = this.#options.hosts?.[host] ?? this.#options.defaultRate;
      bucket = { rate, tokens: rate.burst, updatedAt: now };
      this.#buckets.set(host, bucket);
    }
    const { perSecond, burst } = bucket.rate;
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.updatedAt) / 1000) * perSecond);
    bucket.updatedAt = now;
    return bucket;
  }

  /** Waits until a request to `host` may go. */
  async acquire(host: string, signal?: AbortSignal): Promise<void> {
    const wait = this.reserve(host);
    if (wait > 0) await this.#sleep(wait, signal);
  }
}
