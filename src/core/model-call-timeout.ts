import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { deadlines } from './deadline-clock.ts';
import { SystemError } from './errors.ts';
import type { PartMapper } from './map-stream.ts';

/**
 * One call's signal: aborted by the caller's signal or after `ms`. A deadline on the shared clock and one
 * listener rather than `AbortSignal.timeout` plus `AbortSignal.any`, which cost a scripted delegation about
 * 0.1 ms of its 3 ms (measured with `--cpu-prof`) and keep composite signals alive until they fire.
 */
export function callDeadline(parent: AbortSignal | undefined, ms: number): CallDeadline {
  const controller = new AbortController();
  let expired = false;
  let onExpire: (() => void) | undefined;
  const forward = () => controller.abort(parent?.reason);
  const deadline = deadlines.after(ms, () => {
    expired = true;
    controller.abort(new DOMException('The model call took too long.', 'TimeoutError'));
    onExpire?.();
  });
  if (parent?.aborted) controller.abort(parent.reason);
  else parent?.addEventListener('abort', forward, { once: true });
  return {
    signal: controller.signal,
    get expired() {
      return expired;
    },
    onExpire(listener: () => void) {
      onExpire = listener;
    },
    clear() {
      deadline.cancel();
      parent?.removeEventListener('abort', forward);
    },
  };
}

export interface CallDeadline {
  signal: AbortSignal;
  readonly expired: boolean;
  onExpire(listener: () => void): void;
  clear(): void;
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
export function deadlineMapper(deadline: CallDeadline, ms: number): PartMapper<LanguageModelV4StreamPart> {
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
