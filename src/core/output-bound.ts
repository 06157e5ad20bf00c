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
 * Counts a call's output as it arrives and ends the call, with a clear error, once it is past what
 * `maxOutputTokens` allows plus a margin: text and reasoning against `outputCharLimit`, tool arguments
 * against `toolArgumentChars` (arguments have their own bounds per call and per step, which refuse a call
 * without ending the answer; this ends a stream of arguments that never stops). A provider that ignores
 * the limit (or a stream that never ends) would otherwise be read, journaled and stored until the call's
 * time ran out: 90 MB in 19 s was seen. Applied before anything is kept.
 */
export function outputBoundMapper(
  maxOutputTokens: number | undefined,
  toolArgumentChars: number,
): PartMapper<LanguageModelV4StreamPart> {
  if (maxOutputTokens === undefined) return { transform: (part, enqueue) => enqueue(part) };
  const limit = outputCharLimit(maxOutputTokens);
  let text = 0;
  let argumentsSeen = 0;
  let fail: (error: unknown) => void = () => {};
  let failed = false;
  const end = (what: string, limitChars: number, seen: number) => {
    failed = true;
    fail(
      new ModelBehaviorError(
        'model_output_too_long',
        `the model sent more than ${limitChars.toLocaleString('en')} characters of ${what}, past its limit of ${maxOutputTokens.toLocaleString('en')} output tokens (limits.maxOutputTokens) and a margin; the call was ended`,
        { maxOutputTokens, chars: seen },
      ),
    );
  };
  return {
    start(stop) {
      fail = stop;
    },
    transform(part, enqueue) {
      if (failed) return;
      if (part.type === 'text-delta' || part.type === 'reasoning-delta') {
        text += part.delta.length;
        if (text > limit) return end('text', limit, text);
      } else if (part.type === 'tool-input-delta') {
        argumentsSeen += part.delta.length;
        if (argumentsSeen > toolArgumentChars) return end('tool arguments', toolArgumentChars, argumentsSeen);
      }
      enqueue(part);
    },
  };
}
