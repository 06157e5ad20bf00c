import type { LanguageModelV4, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { wrapLanguageModel } from 'ai';
import { type Usage, usageFromSdk } from './usage.ts';

/**
 * Reads each model call's usage from the model's own stream, as soon as its `finish` chunk passes, and
 * reports it. This is earlier than the SDK's `finish-step` (which waits for the step's tools), so a
 * delegation started in the same step already sees the tokens its parent just spent.
 */
export function meterUsage(model: LanguageModelV4, onUsage: (usage: Usage) => void, onCallEnd: () => void) {
  return wrapLanguageModel({
    model,
    middleware: {
      specificationVersion: 'v4',
      wrapStream: async ({ doStream }) => {
        const result = await doStream();
        const metered = result.stream.pipeThrough(
          new TransformStream<LanguageModelV4StreamPart, LanguageModelV4StreamPart>({
            transform(part, controller) {
              if (part.type === 'finish') {
                onUsage(
                  usageFromSdk({
                    inputTokens: part.usage.inputTokens.total,
                    outputTokens: part.usage.outputTokens.total,
                  }),
                );
              }
              controller.enqueue(part);
            },
            flush: onCallEnd,
          }),
        );
        return { ...result, stream: metered };
      },
    },
  });
}

/** A promise that is settled from outside; resolving twice is harmless. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}
