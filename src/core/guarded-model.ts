import type { LanguageModelV4, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { wrapLanguageModel } from 'ai';
import { journalMapper, recordedStep, type TreeJournal } from './journal.ts';
import { chainMappers, mapStream, type PartMapper } from './map-stream.ts';
import { callDeadline, deadlineMapper, modelCallTimeoutError } from './model-call-timeout.ts';
import { outputBoundMapper } from './output-bound.ts';
import { type ToolCallBounds, toolCallBoundsMapper, withShortErrors } from './tool-call-bounds.ts';
import { type UsageMeterOptions, usageMapper } from './usage-meter.ts';

export interface ModelGuards {
  bounds: ToolCallBounds;
  /** A call refused by the bounds, by tool call id, with the reason the model will read. */
  onRefused: (toolCallId: string, reason: string) => void;
  /** Each call's time limit, in milliseconds. */
  timeoutMs: number;
  usage: UsageMeterOptions;
  /** The tree's journal and this run's place in it: steps are replayed from it or committed to it. */
  journal?: { journal: TreeJournal; runKey: string; onLive?: () => void };
  /** Awaited before each request actually sent (the store's durability barrier). */
  beforeRequest?: () => void | Promise<void>;
}

/**
 * A run's model with every check Cadre makes on a model call, applied in one pass over the call's stream:
 *
 * 1. a step the journal holds is replayed instead of asked again; otherwise `beforeRequest` is awaited and
 *    the request sent;
 * 2. a fresh answer's output is counted as it arrives and ended past `maxOutputTokens` and a margin; its
 *    tool calls are bounded, then committed to the journal (so the journal never holds a
 *    refused 10 MB argument, and no tool runs for a step it does not have);
 * 3. the call's time limit ends a stalled stream;
 * 4. the bounds are applied again (a replayed step's refusals are registered like a fresh one's);
 * 5. usage is read (estimated when the provider sends none).
 *
 * They were separate model wrappers; stacked, each cost its own pull per part (measured: six layers
 * over a call add 31 µs against 5 µs for one), ~0.2 ms of a scripted delegation's ~3 ms beside AI SDK's
 * own loop. Here they are one `mapStream`.
 */
export function guardModel(model: LanguageModelV4, guards: ModelGuards): LanguageModelV4 {
  let calls = 0;
  return wrapLanguageModel({
    model,
    middleware: {
      specificationVersion: 'v4',
      transformParams: async ({ params }) => ({ ...params, prompt: withShortErrors(params.prompt) }),
      wrapGenerate: async ({ params }) => {
        await guards.beforeRequest?.();
        const deadline = callDeadline(params.abortSignal, guards.timeoutMs);
        try {
          return await model.doGenerate({ ...params, abortSignal: deadline.signal });
        } catch (error) {
          throw deadline.expired ? modelCallTimeoutError(guards.timeoutMs) : error;
        } finally {
          deadline.clear();
        }
      },
      wrapStream: async ({ params }) => {
        guards.usage.onCallStart?.();
        const index = String(calls++);
        const journal = guards.journal;
        const recorded = journal && recordedStep(journal.journal, journal.runKey, index);
        const deadline = callDeadline(params.abortSignal, guards.timeoutMs);
        const checks: PartMapper<LanguageModelV4StreamPart>[] = [];
        let result: Awaited<ReturnType<LanguageModelV4['doStream']>> | undefined;
        if (!recorded) {
          journal?.onLive?.();
          try {
            await guards.beforeRequest?.();
            result = await model.doStream({ ...params, abortSignal: deadline.signal });
          } catch (error) {
            deadline.clear();
            throw deadline.expired ? modelCallTimeoutError(guards.timeoutMs) : error;
          }
          // A runaway answer is ended before any of it is journaled or stored.
          checks.push(
            outputBoundMapper(
              params.maxOutputTokens,
              guards.bounds.maxToolCallsPerStep * guards.bounds.maxToolInputChars + 16 * 1024 * 1024,
            ),
          );
          if (journal) {
            checks.push(
              toolCallBoundsMapper(guards.bounds, () => {}),
              journalMapper(journal.journal, journal.runKey, index),
            );
          }
        }
        checks.push(
          deadlineMapper(deadline, guards.timeoutMs),
          toolCallBoundsMapper(guards.bounds, guards.onRefused),
          usageMapper(guards.usage, params),
        );
        const stream = mapStream(recorded ?? result!.stream, chainMappers(checks));
        return { ...(result ?? {}), stream };
      },
    },
  }) as LanguageModelV4;
}
