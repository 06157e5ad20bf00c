import type { LanguageModelV4, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { wrapLanguageModel } from 'ai';
import { SystemError } from './errors.ts';
import { mapStream } from './map-stream.ts';

/**
 * Bounds each model call by wall-clock time, separately from the run's own timeout: a provider that
 * stops answering mid-stream ends that call (and so the run, as `timeout`) in `ms`, instead of holding
 * the run until its whole time is gone. The time covers the call from request to the stream's last chunk,
 * retries included; tools run by the SDK afterwards are not part of it.
 */
export function limitModelCall(model: LanguageModelV4, ms: number): LanguageModelV4 {
  const timeoutError = () =>
    new SystemError(
      'model_call_timeout',
      `a model call took longer than its limit of ${formatSeconds(ms)} (limits.modelCallTimeoutSeconds)`,
      { limitMs: ms },
    );
  return wrapLanguageModel({
    model,
    middleware: {
      specificationVersion: 'v4',
      wrapGenerate: async ({ params }) => {
        const deadline = callDeadline(params.abortSignal, ms);
        try {
          return await model.doGenerate({ ...params, abortSignal: deadline.signal });
        } catch (error) {
          throw deadline.expired ? timeoutError() : error;
        } finally {
          deadline.clear();
        }
      },
      wrapStream: async ({ params }) => {
        const deadline = callDeadline(params.abortSignal, ms);
        let result: Awaited<ReturnType<LanguageModelV4['doStream']>>;
        try {
          result = await model.doStream({ ...params, abortSignal: deadline.signal });
        } catch (error) {
          deadline.clear();
          throw deadline.expired ? timeoutError() : error;
        }
        const bounded = mapStream<LanguageModelV4StreamPart>(result.stream, {
          start(fail) {
            deadline.onExpire(() => fail(timeoutError()));
          },
          transform: (part, enqueue) => enqueue(part),
          end: () => deadline.clear(),
        });
        return { ...result, stream: bounded };
      },
    },
  });
}

/**
 * One call's signal: aborted by the caller's signal or after `ms`. A timer and one listener rather than
 * `AbortSignal.timeout` plus `AbortSignal.any`, which cost a scripted delegation about 0.1 ms of its
 * 3 ms (measured with `--cpu-prof`) and keep composite signals alive until they fire.
 */
function callDeadline(parent: AbortSignal | undefined, ms: number) {
  const controller = new AbortController();
  let expired = false;
  let onExpire: (() => void) | undefined;
  const forward = () => controller.abort(parent?.reason);
  const timer = setTimeout(() => {
    expired = true;
    controller.abort(new DOMException('The model call took too long.', 'TimeoutError'));
    onExpire?.();
  }, ms);
  // A call's time limit alone never keeps the process running.
  timer.unref();
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
      clearTimeout(timer);
      parent?.removeEventListener('abort', forward);
    },
  };
}

/** True when `error` is a model call that went past its own time limit. */
export function isModelCallTimeout(error: unknown): boolean {
  return SystemError.isInstance(error) && error.code === 'model_call_timeout';
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
