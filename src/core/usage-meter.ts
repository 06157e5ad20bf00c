import type { LanguageModelV4StreamPart, LanguageModelV4Usage } from '@ai-sdk/provider';
import type { PartMapper } from './map-stream.ts';
import { estimateTokens, type Usage, usageFromStream } from './usage.ts';

export interface UsageMeterOptions {
  /** Each model call's usage, as soon as its `finish` chunk passes; `estimated` when made up from text. */
  onUsage?: (usage: Usage) => void;
  /** The call's stream ended (with or without usage). */
  onCallEnd?: () => void;
  /** A model call starts (before the request is sent). */
  onCallStart?: () => void;
  /** The model finished answering (its `finish` chunk), before the step's tools are done. */
  onFinish?: () => void;
  /** The call's usage was estimated (the provider sent none); told before its `finish` chunk passes on. */
  onEstimated?: () => void;
}

/**
 * Reads each model call's usage from the model's own stream, as soon as its `finish` chunk passes.
 *
 * - A provider that reports no usage (an OpenAI-compatible server not asked for it, or one that ignores
 *   the request) gets an estimate from the characters sent and received, written into the `finish` chunk,
 *   so runs and budgets never count such a call as 0 tokens.
 * - `onUsage` comes earlier than the SDK's `finish-step` (which waits for the step's tools), so a
 *   delegation started in the same step already sees the tokens its parent just spent.
 *
 * One call's stream (see guarded-model.ts); `params` are the call's.
 */
export function usageMapper(
  options: UsageMeterOptions,
  params: { prompt: unknown; tools?: unknown },
): PartMapper<LanguageModelV4StreamPart> {
  let outputCharacters = 0;
  return {
    transform(part, enqueue) {
      if (part.type === 'text-delta' || part.type === 'reasoning-delta')
        outputCharacters += part.delta.length;
      else if (part.type === 'tool-call') outputCharacters += part.toolName.length + part.input.length;
      if (part.type === 'finish') {
        options.onFinish?.();
        let usage = part.usage;
        const estimated = usage.inputTokens.total === undefined && usage.outputTokens.total === undefined;
        if (estimated) {
          usage = estimatedUsage(promptCharacters(params), outputCharacters);
          options.onEstimated?.();
        }
        options.onUsage?.(usageFromStream(usage, estimated));
        enqueue(estimated ? { ...part, usage } : part);
        return;
      }
      enqueue(part);
    },
    flush: () => options.onCallEnd?.(),
  };
}

function promptCharacters(params: { prompt: unknown; tools?: unknown }): number {
  return JSON.stringify(params.prompt).length + (params.tools ? JSON.stringify(params.tools).length : 0);
}

function estimatedUsage(inputCharacters: number, outputCharacters: number): LanguageModelV4Usage {
  const input = estimateTokens(inputCharacters);
  const output = estimateTokens(outputCharacters);
  return {
    inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: output, text: output, reasoning: undefined },
  };
}

/** A promise that is settled from outside; resolving twice is harmless. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}
