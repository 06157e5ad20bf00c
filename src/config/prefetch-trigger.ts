import { RE2JS } from 're2js';
import { UserError } from '../core/errors.ts';

/**
 * A prefetch trigger compiled for matching questions (case-insensitive). RE2 runs in time linear in the
 * question, so a trigger like `(a+)+$` cannot freeze the server for every user the way a backtracking
 * regular expression can; its syntax has no lookaround or backreferences. Config files, saved settings and
 * each question all compile it here.
 */
export function prefetchTrigger(trigger: string): RE2JS {
  try {
    return RE2JS.compile(trigger, RE2JS.CASE_INSENSITIVE);
  } catch (error) {
    throw new UserError(
      'invalid_settings',
      `prefetch.trigger: ${(error as Error).message} (RE2 syntax: no lookaround or backreferences)`,
      { trigger },
    );
  }
}

/** True when `trigger` compiles as a prefetch trigger (see prefetchTrigger). */
export function isPrefetchTrigger(trigger: string): boolean {
  try {
    prefetchTrigger(trigger);
    return true;
  } catch {
    return false;
  }
}
