import { type ErrorBody, errorBody, httpStatusFor } from '../app/error-maps.ts';
import { CadreError } from '../core/index.ts';
import { loggedPath } from './request-log.ts';

export type { ErrorBody };

/**
 * An error as an HTTP response, through the one map from errors to statuses (`app/error-maps.ts`).
 * Anything that is not a CadreError is a bug: 500 with a generic sentence, and the details go only to
 * the server log.
 */
export function httpError(error: unknown): { status: number; body: ErrorBody; internal: boolean } {
  return { status: httpStatusFor(error), body: errorBody(error), internal: !(error instanceof CadreError) };
}

/** The server log's line for a bug met while answering `method path` (the client only sees "see its log"). */
export function internalErrorLine(method: string, path: string, error: unknown): string {
  return `error in ${method} ${loggedPath(path)}: ${(error as Error)?.stack ?? error}`;
}
