/**
 * Cadre's errors say who is at fault: the user (bad config, unknown agent), the model (a call it may not
 * make, arguments that do not parse), or the system (a provider that stays down). Each carries structured
 * fields; the CLI and server map them to exit codes and HTTP statuses in one place.
 */
export type Fault = 'user' | 'model' | 'system';

export class CadreError extends Error {
  readonly fault: Fault;
  readonly code: string;
  readonly details: Record<string, unknown>;

  constructor(
    fault: Fault,
    code: string,
    message: string,
    details: Record<string, unknown> = {},
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'CadreError';
    this.fault = fault;
    this.code = code;
    this.details = details;
  }

  static isInstance(value: unknown): value is CadreError {
    return value instanceof CadreError;
  }
}

/** The person or their configuration is at fault; the message says what to change. */
export class UserError extends CadreError {
  constructor(code: string, message: string, details: Record<string, unknown> = {}) {
    super('user', code, message, details);
    this.name = 'UserError';
  }
}

/** The model asked for something it may not have or sent something that does not parse. */
export class ModelBehaviorError extends CadreError {
  constructor(code: string, message: string, details: Record<string, unknown> = {}) {
    super('model', code, message, details);
    this.name = 'ModelBehaviorError';
  }
}

/** Something outside the person's control failed: a provider, the network, the disk. */
export class SystemError extends CadreError {
  constructor(code: string, message: string, details: Record<string, unknown> = {}, cause?: unknown) {
    super('system', code, message, details, cause);
    this.name = 'SystemError';
  }
}

/** One line, no stack: what a person should read about an error. */
/**
 * Aborting a run with this (or a kind of it) hands the run to another process rather than ending it: it
 * stops here and records nothing more (no `cancelled` end), and what its journal holds is continued there
 * (a worker stopping, or a job taken from a worker judged gone).
 */
export class RunHandedOff extends Error {
  override name = 'RunHandedOff';
}

/**
 * A person stopped this run (and its subtree) alone, not its tree: it ends `cancelled` with what it had
 * done, which its parent receives and goes on with (see `finishInterrupted`).
 */
export class RunStopped extends Error {
  override name = 'RunStopped';
}

/**
 * Why a background run is stopped when the run that started it ended without being able to take another
 * turn (its turn limit, an error, its budget): its result would reach no one. The message says so.
 */
export class ParentEnded extends Error {
  override name = 'ParentEnded';
}

export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
