import { APICallError } from 'ai';
import { UserError } from '../core/errors.ts';

/**
 * What a provider's refusal says about retrying it: an account problem (quota used up, no credit) that no
 * retry can fix and the person must act on, and the wait a provider asked for before the next attempt, in
 * whichever of its own words it said it.
 */

/** The error body a provider sent, parsed, when it was JSON. */
function bodyOf(error: APICallError): Record<string, unknown> | undefined {
  if (error.data && typeof error.data === 'object') return error.data as Record<string, unknown>;
  if (!error.responseBody) return undefined;
  try {
    const parsed = JSON.parse(error.responseBody) as unknown;
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function providerName(url: string): string {
  if (url.includes('openai')) return 'OpenAI';
  if (url.includes('anthropic')) return 'Anthropic';
  if (url.includes('googleapis')) return 'Google';
  return 'The model provider';
}

/**
 * A refusal no retry can fix because of the account (OpenAI `insufficient_quota`, Anthropic's "credit
 * balance is too low", HTTP 402), as a UserError saying what to do; undefined for anything else.
 */
export function accountProblem(error: unknown): UserError | undefined {
  if (!APICallError.isInstance(error)) return undefined;
  const body = bodyOf(error);
  const inner = (body?.error ?? body) as { code?: unknown; type?: unknown; message?: unknown } | undefined;
  const words = `${String(inner?.code ?? '')} ${String(inner?.type ?? '')} ${String(inner?.message ?? error.message)}`;
  const who = providerName(error.url);
  if (/insufficient_quota|exceeded your current quota/i.test(words) && !retryInfoMs(body)) {
    return new UserError(
      'provider_quota',
      `${who} refused: the account's quota is used up (${firstWords(inner?.message)}). Add credit or raise the limit in the provider's billing settings, then ask again; retrying will not help.`,
      { status: error.statusCode },
    );
  }
  if (error.statusCode === 402 || /credit balance is too low|billing/i.test(words)) {
    return new UserError(
      'provider_billing',
      `${who} refused for billing (${firstWords(inner?.message)}). Check the account's credit and payment method, then ask again; retrying will not help.`,
      { status: error.statusCode },
    );
  }
  return undefined;
}

function firstWords(message: unknown): string {
  const text = typeof message === 'string' ? message.split('\n')[0]! : 'no details';
  return text.length > 160 ? `${text.slice(0, 160)}…` : text;
}

/** "6s", "1m30s", "20ms", "0.5s", "1h2m" (OpenAI's x-ratelimit-reset-*, Gemini's retryDelay) in ms. */
export function durationMs(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)];
  if (!parts.length || parts.map((part) => part[0]).join('') !== text.trim()) return undefined;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
  return parts.reduce((sum, part) => sum + Number(part[1]) * unit[part[2] as keyof typeof unit], 0);
}

/** Gemini's `RetryInfo` detail (`{"@type": "...google.rpc.RetryInfo", "retryDelay": "34s"}`), in ms. */
function retryInfoMs(body: Record<string, unknown> | undefined): number | undefined {
  const details = (body?.error as { details?: unknown } | undefined)?.details;
  if (!Array.isArray(details)) return undefined;
  for (const detail of details) {
    const entry = detail as { '@type'?: unknown; retryDelay?: unknown };
    if (typeof entry['@type'] === 'string' && entry['@type'].endsWith('google.rpc.RetryInfo'))
      return durationMs(typeof entry.retryDelay === 'string' ? entry.retryDelay : undefined);
  }
  return undefined;
}

/**
 * The wait the provider asked for before another attempt, in ms: `retry-after-ms`, `retry-after`
 * (seconds or a date), OpenAI's `x-ratelimit-reset-requests` / `-tokens` on a 429, Gemini's RetryInfo.
 * Undefined when it asked for none.
 */
export function providerDelayMs(error: unknown, now = Date.now()): number | undefined {
  if (!APICallError.isInstance(error)) return undefined;
  const headers = Object.fromEntries(
    Object.entries(error.responseHeaders ?? {}).map(([key, value]) => [key.toLowerCase(), value]),
  );
  const milliseconds = Number.parseFloat(headers['retry-after-ms'] ?? '');
  if (Number.isFinite(milliseconds)) return Math.max(0, milliseconds);
  const after = headers['retry-after'];
  if (after) {
    const seconds = Number(after);
    const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(after) - now;
    if (Number.isFinite(ms)) return Math.max(0, ms);
  }
  if (error.statusCode === 429) {
    const resets = [headers['x-ratelimit-reset-requests'], headers['x-ratelimit-reset-tokens']]
      .map(durationMs)
      .filter((ms): ms is number => ms !== undefined);
    if (resets.length) return Math.max(...resets);
  }
  return retryInfoMs(bodyOf(error));
}
