import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { type DeadlineSignal, deadlineSignal } from './deadline-clock.ts';
import { SystemError } from './errors.ts';
import type { PartMapper } from './map-stream.ts';

/** One model call's signal: aborted by the caller's signal or after `ms` (see deadlineSignal). */
export function callDeadline(parent: AbortSignal | undefined, ms: number): DeadlineSignal {
  return deadlineSignal(parent, ms, 'The model call took too long.');
}

/**
 * Bounds each model call by wall-clock time, separately from the run's own timeout: a provider that
 * stops answering mid-stream ends that call (and so the run, as `timeout`) in `ms`, instead of holding
 * the run until its whole time is gone. The time covers the call from request to the stream's last chunk,
 * retries included; tools run by the SDK afterwards are not part of it.
 *
 * This ends a call's stream with the time-limit error when its deadline passes, and clears the deadline
 * when the stream ends.
 */
export function deadlineMapper(deadline: DeadlineSignal, ms: number): PartMapper<LanguageModelV4StreamPart> {
  return {
    start(fail) {
      deadline.onExpire(() => fail(modelCallTimeoutError(ms)));
    },
    transform: (part, enqueue) => enqueue(part),
    end: () => deadline.clear(),
  };
}

/** The error of a call that went past its limit of `ms`. */
export function modelCallTimeoutError(ms: number): SystemError {
  return new SystemError(
    'model_call_timeout',
    `a model call took longer than its limit of ${formatSeconds(ms)} (limits.modelCallTimeoutSeconds)`,
    { limitMs: ms },
  );
}

/** True when `error` is a model call that went past its own time limit. */
export function isModelCallTimeout(error: unknown): boolean {
  return SystemError.isInstance(error) && error.code === 'model_call_timeout';
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
