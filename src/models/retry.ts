import type { LanguageModelV4, LanguageModelV4Middleware } from '@ai-sdk/provider';
import { APICallError, wrapLanguageModel } from 'ai';
import { abortableSleep } from '../core/abortable-sleep.ts';
import { SystemError } from '../core/errors.ts';
import { cadreCallOptionsOf } from '../core/model-call-options.ts';
import { describeModelError } from '../core/model-errors.ts';
import { accountProblem, providerDelayMs } from './provider-errors.ts';

/** How provider calls are retried. All delays in milliseconds. */
export interface RetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** First backoff delay; doubles each retry, with jitter. */
  baseDelayMs: number;
  /**
   * Cap for any single wait of Cadre's own backoff. A wait the provider asked for (Retry-After, OpenAI's
   * reset headers, Gemini's RetryInfo) is honoured up to the run's deadline instead.
   */
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

/** The wait a provider asked for (see providerDelayMs), capped; else undefined. */
export function requestedDelayMs(error: unknown, capMs: number, now = Date.now()): number | undefined {
  const ms = providerDelayMs(error, now);
  return ms === undefined ? undefined : Math.min(ms, capMs);
}

/** The longest wait a provider may ask for when the call has no deadline to bound it. */
const MAX_PROVIDER_WAIT_MS = 600_000;

/** Runs `attempt`, retrying retryable failures with backoff; waits end early when `signal` aborts. */
export async function withRetries<T>(
  attempt: () => PromiseLike<T>,
  policy: RetryPolicy,
  signal: AbortSignal | undefined,
  onRetry?: (info: { attempt: number; delayMs: number; error: unknown }) => void,
  /** When the run must end (ms since the epoch): a provider's wait past it fails at once, saying so. */
  deadline?: number,
): Promise<T> {
  for (let attemptNumber = 0; ; attemptNumber++) {
    try {
      return await attempt();
    } catch (error) {
      if (signal?.aborted) throw error;
      // Quota used up, no credit: no retry can fix it, and the person must act.
      const account = accountProblem(error);
      if (account) throw account;
      if (!isRetryable(error)) throw error;
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
      const asked = providerDelayMs(error);
      const now = Date.now();
      if (asked !== undefined && deadline !== undefined && now + asked > deadline) {
        throw new SystemError(
          'provider_unavailable',
          `the model provider asked to wait ${Math.ceil(asked / 1000)} s before another attempt, past this run's time limit: ${describeModelError(error)}`,
          { attempts: attemptNumber + 1, retryAfterMs: asked },
          error,
        );
      }
      const delayMs = asked === undefined ? backoff : Math.min(asked, MAX_PROVIDER_WAIT_MS);
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
    wrapGenerate: ({ doGenerate, params }) => retried(doGenerate, policy, params),
    wrapStream: ({ doStream, params }) => retried(doStream, policy, params),
  };
  return wrapLanguageModel({ model, middleware }) as LanguageModelV4;
}

/**
 * One call under `policy`, with what the run handed it (core/model-call-options.ts): its deadline, and
 * where each retry is told, as attempt N of at most maxRetries + 1.
 */
function retried<T>(
  attempt: () => PromiseLike<T>,
  policy: RetryPolicy,
  params: { abortSignal?: AbortSignal | undefined; providerOptions?: Record<string, unknown> | undefined },
): Promise<T> {
  const { deadline, onRetry } = cadreCallOptionsOf(params.providerOptions);
  const tell = onRetry
    ? (info: { attempt: number; delayMs: number; error: unknown }) =>
        onRetry({
          attempt: info.attempt + 1,
          maxAttempts: policy.maxRetries + 1,
          delayMs: Math.round(info.delayMs),
          reason: describeModelError(info.error),
        })
    : undefined;
  return withRetries(attempt, policy, params.abortSignal, tell, deadline);
}
