import { APICallError, RetryError } from 'ai';
import { CadreError } from './errors.ts';

/**
 * A one-line account of a model or provider failure for a person: the HTTP status and the provider's own
 * words when there are some, never a stack trace.
 */
export function describeModelError(error: unknown): string {
  if (RetryError.isInstance(error)) {
    const last = describeModelError(error.lastError);
    return `the model provider kept failing after ${error.errors.length} attempts: ${last}`;
  }
  if (CadreError.isInstance(error)) return error.message;
  if (APICallError.isInstance(error)) {
    const host = safeHost(error.url) ?? 'the model provider';
    const detail = firstLine(error.message);
    const brokenOff = connectionBrokeOff(error);
    if (brokenOff) {
      return `the connection to ${host} closed in the middle of the answer${error.statusCode ? ` (after HTTP ${error.statusCode})` : ''}: ${brokenOff}`;
    }
    if (!error.statusCode) return `could not reach ${host}${detail ? `: ${detail}` : ''}`;
    return `${host} answered HTTP ${error.statusCode}${detail ? `: ${detail}` : ''}`;
  }
  const brokenOff = connectionBrokeOff(error);
  if (brokenOff)
    return `the connection to the model provider closed in the middle of the answer: ${brokenOff}`;
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? ` (${firstLine(error.cause.message)})` : '';
    return `${firstLine(error.message)}${cause}`;
  }
  return String(error);
}

/**
 * A failure in the middle of a streamed answer that another attempt may not meet: the provider overloaded
 * or failing on its side (Anthropic's `overloaded_error` event, OpenAI's `server_error`, Gemini's
 * `UNAVAILABLE`), or the connection cut. Not a refused request, a timeout or a model's misbehaviour.
 */
export function isTransientStreamFailure(error: unknown): boolean {
  if (CadreError.isInstance(error)) return false;
  if (connectionBrokeOff(error) !== undefined) return true;
  // AI SDK's StreamProviderError (an `error` event inside a stream) says itself whether a retry may help.
  const flagged = error as { isRetryable?: unknown; type?: unknown; code?: unknown } | null;
  if (flagged?.isRetryable === true) return true;
  if (APICallError.isInstance(error)) {
    if (error.isRetryable) return true;
    // A refused request (4xx) is the same the next time.
    if (error.statusCode !== undefined && error.statusCode < 500) return false;
  }
  let text: string;
  try {
    const data = APICallError.isInstance(error) ? JSON.stringify(error.data ?? '') : '';
    text =
      error instanceof Error
        ? `${error.message} ${String(error.cause ?? '')} ${data}`
        : JSON.stringify(error);
  } catch {
    text = String(error);
  }
  return /overloaded|server_error|api_error|UNAVAILABLE|INTERNAL|ECONNRESET|socket hang up/i.test(text);
}

/**
 * Why the body of an answer stopped arriving, when it did (undici's "terminated", a reset socket while
 * reading): the server was reached and had started answering, so "could not reach" would be false.
 */
function connectionBrokeOff(error: unknown): string | undefined {
  let current: unknown = error;
  let terminated = false;
  for (let depth = 0; current instanceof Error && depth < 6; depth++) {
    if (current.message === 'terminated') terminated = true;
    else if (terminated) return firstLine(current.message);
    current = current.cause;
  }
  return terminated ? 'the server stopped sending' : undefined;
}

function safeHost(url: string): string | undefined {
  try {
    return new URL(url).host;
  } catch {
    return undefined;
  }
}

function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}
