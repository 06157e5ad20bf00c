import { CadreError } from '../core/errors.ts';

/** Exit codes: 0 ok, 1 the run did not end ok, 2 the person's input or config, 3 the system, 130 Ctrl-C. */
export const EXIT = { ok: 0, notOk: 1, usage: 2, system: 3, interrupted: 130 } as const;

/** User-fault codes that mean "there is no such thing (that is yours)": HTTP 404. */
const NOT_FOUND = new Set([
  'unknown_session',
  'unknown_run',
  'unknown_document',
  'unknown_version',
  'unknown_agent',
  'not_found',
]);
/** User-fault codes with their own HTTP status. */
const USER_STATUS: Record<string, number> = {
  session_exists: 409,
  run_active: 409,
  answer_running: 409,
  not_interrupted: 409,
  not_failed: 409,
  run_not_running: 409,
  conversation_not_kept: 409,
  question_replaced: 409,
  agent_disabled: 409,
  unauthorized: 401,
  forbidden: 403,
  operator_setting: 403,
  too_large: 413,
  payload_too_large: 413,
  rate_limited: 429,
  too_many_chats: 429,
  too_many_uploads: 429,
  too_many_files: 413,
  // Nothing the caller sent is wrong: the server has no model configured, or no key for the one it would
  // run (the CLI's person can export it; an HTTP client cannot).
  no_model: 503,
  missing_key: 503,
};
/** System-fault codes with their own HTTP status. */
const SYSTEM_STATUS: Record<string, number> = {
  provider_unavailable: 503,
  // No worker took the question in time (`queue.waitTimeoutSeconds`): it was withdrawn.
  queue_timeout: 503,
  timeout: 504,
};

/**
 * The HTTP status for an error, by whose fault it is: the person's is 4xx (404 for what does not exist
 * or is someone else's, 400 for anything else they can fix), the model's 502 (an upstream that misbehaved),
 * the system's 5xx. Anything that is not a `CadreError` is a bug: 500.
 */
export function httpStatusFor(error: unknown): number {
  if (!CadreError.isInstance(error)) return 500;
  if (error.fault === 'user') {
    if (NOT_FOUND.has(error.code)) return 404;
    return USER_STATUS[error.code] ?? 400;
  }
  if (error.fault === 'model') return 502;
  return SYSTEM_STATUS[error.code] ?? 500;
}

/** The `cadre` exit code for an error that ended a command: the person's fault 2, anything else 3. */
export function exitCodeFor(error: unknown): number {
  if (CadreError.isInstance(error) && error.fault === 'user') return EXIT.usage;
  return EXIT.system;
}

/** The JSON body of every error response: a stable code and a sentence for people, never a stack. */
export interface ErrorBody {
  error: { code: string; message: string };
}

/** What a front door answers an error with; a bug's own message stays in the server log. */
export function errorBody(error: unknown): ErrorBody {
  if (CadreError.isInstance(error)) return { error: { code: error.code, message: error.message } };
  return { error: { code: 'internal', message: 'Something went wrong on the server; see its log.' } };
}
