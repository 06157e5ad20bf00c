/** When to retry a request and how long to wait: 429 and 5xx, honouring `Retry-After` up to a cap. */
export interface RetryPolicy {
  /** Retries after the first attempt. */
  retries: number;
  /** First backoff; doubles each retry. */
  baseDelayMs: number;
  /** A `Retry-After` longer than this is not waited for: the error goes back with the wait in it. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { retries: 2, baseDelayMs: 400, maxRetryAfterMs: 10_000 };

export function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 500 || status === 502 || status === 503 || status === 504;
}

/** Parses `Retry-After` (seconds or an HTTP date) into milliseconds from `now`; undefined when absent or bad. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Exponential backoff with up to 25% jitter from `random` (0..1). */
export function backoffDelay(policy: RetryPolicy, attempt: number, random: number): number {
  const base = policy.baseDelayMs * 2 ** attempt;
  return Math.round(base * (1 + random * 0.25));
}
