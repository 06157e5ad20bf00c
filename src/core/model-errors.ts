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
    if (!error.statusCode) return `could not reach ${host}${detail ? `: ${detail}` : ''}`;
    return `${host} answered HTTP ${error.statusCode}${detail ? `: ${detail}` : ''}`;
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
