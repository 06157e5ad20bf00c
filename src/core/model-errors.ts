import { APICallError, RetryError } from 'ai';

/**
 * A one-line account of a model or provider failure for a person: the HTTP status and the provider's own
 * words when there are some, never a stack trace.
 */
export function describeModelError(error: unknown): string {
  if (RetryError.isInstance(error)) {
    const last = describeModelError(error.lastError);
    return `the model provider kept failing after ${error.errors.length} attempts: ${last}`;
  }
  if (APICallError.isInstance(error)) {
    const status = error.statusCode ? `HTTP ${error.statusCode}` : 'no response';
    const host = safeHost(error.url);
    const detail = firstLine(error.message);
    return `${host ? `${host} answered ` : ''}${status}${detail ? `: ${detail}` : ''}`;
  }
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? ` (${firstLine(error.cause.message)})` : '';
    return `${firstLine(error.message)}${cause}`;
  }
  return String(error);
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
