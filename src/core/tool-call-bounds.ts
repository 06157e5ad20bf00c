import type { LanguageModelV4Prompt, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import type { PartMapper } from './map-stream.ts';

/**
 * Bounds on what one model response may ask of the tools, applied to the model's own stream before the AI
 * SDK parses anything. A model (or a prompt injection steering it) can write a 10 MB argument, nest one
 * 10,000 levels deep (deeper than any recursive JSON code can follow) or ask for 5,000 calls in one step;
 * each such call is refused here: its arguments are replaced by a short notice, so nothing large or deep
 * reaches the parser, the tools, the events, the store or the next request.
 */
export interface ToolCallBounds {
  /** Characters of JSON arguments one tool call may have. */
  maxToolInputChars: number;
  /** Deepest nesting of arrays and objects in one call's arguments. */
  maxToolInputDepth: number;
  /** Tool calls one model response may make; the rest are refused. */
  maxToolCallsPerStep: number;
}

/** The key of the notice that stands in for refused arguments (no tool declares it). */
export const REFUSED_INPUT_KEY = 'cadre_refused';

/** Characters of a failed tool call's error text repeated to the model in later requests. */
export const MAX_ECHOED_ERROR_CHARS = 2_000;

/**
 * Checks every tool call in one model call's stream against `bounds` (see guarded-model.ts). Refused calls
 * are reported to `onRefused` (by tool call id, with the reason the model will read) before the SDK sees
 * them, their arguments replaced by a short notice.
 */
export function toolCallBoundsMapper(
  bounds: ToolCallBounds,
  onRefused: (toolCallId: string, reason: string) => void,
): PartMapper<LanguageModelV4StreamPart> {
  let calls = 0;
  let started = 0;
  const inputChars = new Map<string, number>();
  /** Calls past the per-step cap: not passed on at all; one refusal stands for all of them. */
  const overCap = new Set<string>();
  let firstOverCap: { toolCallId: string; toolName: string } | undefined;
  let dropped = 0;
  const collapsed = (enqueue: (part: LanguageModelV4StreamPart) => void) => {
    if (!firstOverCap) return;
    const reason = `refused: at most ${bounds.maxToolCallsPerStep} tool calls per step, and this response asked for ${bounds.maxToolCallsPerStep + dropped}; the ${dropped} past the limit were not run. Make the rest in later steps, or fewer, larger calls`;
    onRefused(firstOverCap.toolCallId, reason);
    enqueue({ type: 'tool-call', ...firstOverCap, input: JSON.stringify({ [REFUSED_INPUT_KEY]: reason }) });
    firstOverCap = undefined;
  };
  return {
    transform(part, enqueue) {
      if (part.type === 'tool-input-start' && ++started > bounds.maxToolCallsPerStep) overCap.add(part.id);
      if (
        (part.type === 'tool-input-start' ||
          part.type === 'tool-input-delta' ||
          part.type === 'tool-input-end') &&
        overCap.has(part.id)
      )
        return;
      if (part.type === 'tool-input-delta') {
        // Partial arguments past the size limit are not passed on: the whole call will be refused.
        const seen = (inputChars.get(part.id) ?? 0) + part.delta.length;
        inputChars.set(part.id, seen);
        if (seen > bounds.maxToolInputChars) return;
      }
      if (part.type === 'finish') collapsed(enqueue);
      if (part.type !== 'tool-call') {
        enqueue(part);
        return;
      }
      const earlier = earlierRefusal(part.input);
      if (earlier) {
        // Refused by an inner bound (or in a replayed step): passed on as it is, the collapsed note too.
        onRefused(part.toolCallId, earlier);
        enqueue(part);
        return;
      }
      calls++;
      if (calls > bounds.maxToolCallsPerStep) {
        // 5,000 calls must not become 5,000 refusals in the next request: one stands for them all.
        firstOverCap ??= { toolCallId: part.toolCallId, toolName: part.toolName };
        dropped++;
        return;
      }
      const reason = refusal(part.input, calls, bounds);
      if (!reason) {
        enqueue(part);
        return;
      }
      onRefused(part.toolCallId, reason);
      enqueue({ ...part, input: JSON.stringify({ [REFUSED_INPUT_KEY]: reason }) });
    },
    flush: collapsed,
  };
}

/** The reason of a call refused before (by an inner bound, or in a journaled step now replayed). */
function earlierRefusal(input: string): string | undefined {
  if (!input.startsWith(`{"${REFUSED_INPUT_KEY}":`)) return undefined;
  try {
    const reason = (JSON.parse(input) as Record<string, unknown>)[REFUSED_INPUT_KEY];
    return typeof reason === 'string' ? reason : undefined;
  } catch {
    return undefined;
  }
}

/** Why a call with these raw arguments must not run, or undefined when it may. */
export function refusal(input: string, callNumber: number, bounds: ToolCallBounds): string | undefined {
  if (callNumber > bounds.maxToolCallsPerStep) {
    return `refused: at most ${bounds.maxToolCallsPerStep} tool calls per step; make the rest in later steps, or fewer, larger calls`;
  }
  if (input.length > bounds.maxToolInputChars) {
    return `refused: the arguments are ${input.length.toLocaleString('en')} characters, more than the limit of ${bounds.maxToolInputChars.toLocaleString('en')}; send shorter arguments`;
  }
  const depth = nestingDepth(input, bounds.maxToolInputDepth);
  if (depth > bounds.maxToolInputDepth) {
    return `refused: the arguments nest arrays and objects more than ${bounds.maxToolInputDepth} levels deep; send flatter arguments`;
  }
  return undefined;
}

/**
 * The deepest nesting of `[`/`{` in JSON text, read without recursion and stopping once past `limit`.
 * Brackets inside strings do not count.
 */
export function nestingDepth(json: string, limit = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < json.length; index++) {
    const char = json.charCodeAt(index);
    if (inString) {
      if (char === 92 /* \ */) index++;
      else if (char === 34 /* " */) inString = false;
    } else if (char === 34) inString = true;
    else if (char === 91 /* [ */ || char === 123 /* { */) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (char === 93 /* ] */ || char === 125 /* } */) depth--;
  }
  return deepest;
}

/**
 * The prompt with every tool error text cut to MAX_ECHOED_ERROR_CHARS (an echoed argument may be huge).
 * The same prompt when nothing needs cutting, which is almost always: no copy per model call.
 */
export function withShortErrors(prompt: LanguageModelV4Prompt): LanguageModelV4Prompt {
  if (!prompt.some((message) => message.role === 'tool' && message.content.some(isLongError))) return prompt;
  return prompt.map((message) => {
    if (message.role !== 'tool' || !message.content.some(isLongError)) return message;
    return {
      ...message,
      content: message.content.map((part) => {
        if (!isLongError(part)) return part;
        const text = part.output.value;
        const cut = `${text.slice(0, MAX_ECHOED_ERROR_CHARS)}… [${(text.length - MAX_ECHOED_ERROR_CHARS).toLocaleString('en')} more characters not repeated]`;
        return { ...part, output: { ...part.output, value: cut } };
      }),
    };
  });
}

type ToolMessagePart = Extract<LanguageModelV4Prompt[number], { role: 'tool' }>['content'][number];

function isLongError(
  part: ToolMessagePart,
): part is ToolMessagePart & { type: 'tool-result'; output: { type: 'error-text'; value: string } } {
  return (
    part.type === 'tool-result' &&
    part.output.type === 'error-text' &&
    part.output.value.length > MAX_ECHOED_ERROR_CHARS
  );
}
