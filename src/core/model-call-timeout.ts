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
        const timer = AbortSignal.timeout(ms);
        try {
          return await model.doGenerate({ ...params, abortSignal: linked(params.abortSignal, timer) });
        } catch (error) {
          throw timer.aborted ? timeoutError() : error;
        }
      },
      wrapStream: async ({ params }) => {
        const timer = AbortSignal.timeout(ms);
        let result: Awaited<ReturnType<LanguageModelV4['doStream']>>;
        try {
          result = await model.doStream({ ...params, abortSignal: linked(params.abortSignal, timer) });
        } catch (error) {
          throw timer.aborted ? timeoutError() : error;
        }
        let onTimeout: () => void = () => {};
        const bounded = mapStream<LanguageModelV4StreamPart>(result.stream, {
          start(fail) {
            onTimeout = () => fail(timeoutError());
            timer.addEventListener('abort', onTimeout, { once: true });
          },
          transform: (part, enqueue) => enqueue(part),
          flush() {
            timer.removeEventListener('abort', onTimeout);
          },
        });
        return { ...result, stream: bounded };
      },
    },
  });
}

/** True when `error` is a model call that went past its own time limit. */
export function isModelCallTimeout(error: unknown): boolean {
  return SystemError.isInstance(error) && error.code === 'model_call_timeout';
}

function linked(signal: AbortSignal | undefined, timer: AbortSignal): AbortSignal {
  return signal ? AbortSignal.any([signal, timer]) : timer;
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
