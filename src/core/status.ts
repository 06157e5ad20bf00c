/**
 * How a run ended. `ok` is the only status that counts as success. `interrupted` is never produced by the
 * run loop: it is recorded afterwards for a run whose process was killed before it could finish.
 */
export const RUN_STATUSES = [
  'ok',
  'partial',
  'error',
  'cancelled',
  'max_turns',
  'timeout',
  'budget',
  'interrupted',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** A run's status while it is still going, plus the final ones. */
export type RunState = RunStatus | 'running';
