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
