import type { LanguageModelV4, LanguageModelV4Middleware } from '@ai-sdk/provider';
import { APICallError, wrapLanguageModel } from 'ai';
import { abortableSleep } from '../core/abortable-sleep.ts';
import { SystemError } from '../core/errors.ts';
import { describeModelError } from '../core/model-errors.ts';

/** How provider calls are retried. All delays in milliseconds. */
export interface RetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** First backoff delay; doubles each retry, with jitter. */
  baseDelayMs: number;
  /** Cap for any single wait, including a provider's Retry-After. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxRetries: 3, baseDelayMs: 500, maxDelayMs: 20_000 };

const RETRYABLE_STATUSES = new Set([408, 409, 429]);
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
]);

/**
 * Whether a provider failure is worth another attempt: 408, 409, 429 and 5xx, and connection failures.
 * 400, 401, 403 and other client errors are final: retrying cannot fix a bad request or a bad key.
 */
export function isRetryable(error: unknown): boolean {
  if (APICallError.isInstance(error)) {
    if (error.statusCode === undefined) return isNetworkFailure(error.cause) || error.isRetryable;
    return RETRYABLE_STATUSES.has(error.statusCode) || error.statusCode >= 500;
  }
  return isNetworkFailure(error);
}

function isNetworkFailure(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
    if (current instanceof TypeError && current.message === 'fetch failed') return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** The wait a provider asked for (Retry-After seconds or date, or retry-after-ms), capped; else undefined. */
export function requestedDelayMs(error: unknown, capMs: number, now = Date.now()): number | undefined {
  if (!APICallError.isInstance(error)) return undefined;
  const headers = Object.fromEntries(
    Object.entries(error.responseHeaders ?? {}).map(([key, value]) => [key.toLowerCase(), value]),
  );
  let ms: number | undefined;
  const milliseconds = Number.parseFloat(headers['retry-after-ms'] ?? '');
  if (Number.isFinite(milliseconds)) ms = milliseconds;
  const after = headers['retry-after'];
  if (ms === undefined && after) {
    const seconds = Number(after);
    ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(after) - now;
  }
  if (ms === undefined || !Number.isFinite(ms)) return undefined;
  return Math.min(Math.max(ms, 0), capMs);
}

/** Runs `attempt`, retrying retryable failures with backoff; waits end early when `signal` aborts. */
export async function withRetries<T>(
  attempt: () => PromiseLike<T>,
  policy: RetryPolicy,
  signal: AbortSignal | undefined,
  onRetry?: (info: { attempt: number; delayMs: number; error: unknown }) => void,
): Promise<T> {
  for (let attemptNumber = 0; ; attemptNumber++) {
    try {
      return await attempt();
    } catch (error) {
      if (signal?.aborted || !isRetryable(error)) throw error;
      if (attemptNumber >= policy.maxRetries) {
        if (attemptNumber === 0) throw error;
        throw new SystemError(
          'provider_unavailable',
          `the model provider is not answering (${attemptNumber + 1} attempts): ${describeModelError(error)}`,
          { attempts: attemptNumber + 1 },
          error,
        );
      }
      const backoff = Math.min(
        policy.baseDelayMs * 2 ** attemptNumber * (0.8 + Math.random() * 0.4),
        policy.maxDelayMs,
      );
      const delayMs = requestedDelayMs(error, policy.maxDelayMs) ?? backoff;
      onRetry?.({ attempt: attemptNumber + 1, delayMs, error });
      await abortableSleep(delayMs, signal);
    }
  }
}

/**
 * Wraps a model so every call is retried under `policy`. Cadre does this instead of the AI SDK's built-in
 * retries because the cap on Retry-After, the base delay and the count must be configurable (and short
 * in tests), and the SDK's are fixed at 2 s and 60 s.
 */
export function withRetryPolicy(model: LanguageModelV4, policy: RetryPolicy): LanguageModelV4 {
  const middleware: LanguageModelV4Middleware = {
    specificationVersion: 'v4',
    wrapGenerate: ({ doGenerate, params }) => withRetries(doGenerate, policy, params.abortSignal),
    wrapStream: ({ doStream, params }) => withRetries(doStream, policy, params.abortSignal),
  };
  return wrapLanguageModel({ model, middleware }) as LanguageModelV4;
}
