import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { ModelBehaviorError } from './errors.ts';
import type { PartMapper } from './map-stream.ts';

/**
 * Characters a model may send per token it was allowed, before its output is taken as runaway. A token
 * is about four characters of prose; long runs of spaces or repeated symbols are more per token, so the
 * bound is twice that, plus a fixed margin for short limits.
 */
const CHARS_PER_TOKEN = 8;
const MARGIN_CHARS = 16_384;

/** The most characters a call allowed `maxOutputTokens` may stream before it is ended. */
export function outputCharLimit(maxOutputTokens: number): number {
  return maxOutputTokens * CHARS_PER_TOKEN + MARGIN_CHARS;
}

/**
 * Counts a call's output (text, reasoning and tool arguments) as it arrives and ends the call, with a
 * clear error, once it is past what `maxOutputTokens` allows plus a margin. A provider that ignores the
 * limit (or a stream that never ends) would otherwise be read, journaled and stored until the call's time
 * ran out: 90 MB in 19 s was seen. Applied before anything is kept.
 */
export function outputBoundMapper(
  maxOutputTokens: number | undefined,
): PartMapper<LanguageModelV4StreamPart> {
  if (maxOutputTokens === undefined) return { transform: (part, enqueue) => enqueue(part) };
  const limit = outputCharLimit(maxOutputTokens);
  let seen = 0;
  let fail: (error: unknown) => void = () => {};
  let failed = false;
  return {
    start(stop) {
      fail = stop;
    },
    transform(part, enqueue) {
      if (failed) return;
      if (part.type === 'text-delta' || part.type === 'reasoning-delta' || part.type === 'tool-input-delta') {
        seen += part.delta.length;
        if (seen > limit) {
          failed = true;
          fail(
            new ModelBehaviorError(
              'model_output_too_long',
              `the model sent more than ${limit.toLocaleString('en')} characters, past its limit of ${maxOutputTokens.toLocaleString('en')} output tokens (limits.maxOutputTokens) and a margin; the call was ended`,
              { maxOutputTokens, chars: seen },
            ),
          );
          return;
        }
      }
      enqueue(part);
    },
  };
}
