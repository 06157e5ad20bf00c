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
    bucket.tokens -= 1;
    return bucket.tokens >= 0 ? 0 : (-bucket.tokens / perSecond) * 1000;
  }

  /** Waits until a request to `host` may go. */
  async acquire(host: string, signal?: AbortSignal): Promise<void> {
    const wait = this.reserve(host);
    if (wait > 0) await this.#sleep(wait, signal);
  }
}
