import { CadreError } from '../core/errors.ts';

/** The JSON body of every error response: a stable code and a sentence for people, never a stack. */
export interface ErrorBody {
  error: { code: string; message: string };
}

/** HTTP statuses for user-fault error codes that are not a plain 400. */
const STATUS_BY_CODE: Record<string, number> = {
  not_found: 404,
  unknown_agent: 404,
  unknown_session: 404,
  unknown_run: 404,
  unknown_document: 404,
  agent_disabled: 409,
  too_many_chats: 429,
  payload_too_large: 413,
  unauthorized: 401,
  forbidden: 403,
  no_model: 503,
};

/**
 * The one place errors become HTTP: user faults are 4xx (400 unless their code says otherwise), model
 * faults 502, system faults 500 (503 when the system is not set up). Anything that is not a CadreError is
 * a bug: 500 with a generic sentence, and the details go only to the server log.
 */
export function httpError(error: unknown): { status: number; body: ErrorBody; internal: boolean } {
  if (error instanceof CadreError) {
    const status =
      STATUS_BY_CODE[error.code] ?? (error.fault === 'user' ? 400 : error.fault === 'model' ? 502 : 500);
    return { status, body: { error: { code: error.code, message: error.message } }, internal: false };
  }
  return {
    status: 500,
    body: { error: { code: 'internal', message: 'Something went wrong on the server; see its log.' } },
    internal: true,
  };
}
