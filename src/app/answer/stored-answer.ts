import type { CadreEvent, PlanStep } from '../../core/events.ts';
import type { Pricing } from '../pricing.ts';
import { AnswerChunks } from './answer-chunks.ts';
import type { CadreUIMessage, ChatMessageMetadata, RunPartData, RunToolCallView } from './protocol.ts';
import type { CadreChunk } from './stream-translator.ts';

/**
 * Longest a tool output is kept in a stored answer, as JSON characters. The run tree keeps every output
 * whole (`GET /api/runs/:id`, `cadre runs show --verbose`); a session message only shows what the page
 * shows in a card, so an MCP server returning megabytes per call does not make every read of the session
 * carry them again.
 */
export const STORED_OUTPUT_CHARS = 4000;

/**
 * The stored form of an answer, built from its tree's events as they happen: the same chunks the wire
 * carries (AnswerChunks), folded into the message a reload shows. Every door stores its answers this way.
 */
export class AnswerRecorder {
  readonly #chunks: AnswerChunks;
  readonly #builder = new AnswerMessageBuilder();

  constructor(answerId: string, sessionId: string, pricing?: Pricing) {
    this.#chunks = new AnswerChunks(answerId, sessionId, pricing);
    for (const chunk of this.#chunks.start()) this.#builder.apply(chunk);
  }

  event(event: CadreEvent): void {
    for (const chunk of this.#chunks.event(event)) this.#builder.apply(chunk);
  }

  /** The message to store once the tree has ended (`fallback` says how when its root never finished). */
  message(fallback?: Pick<ChatMessageMetadata, 'status'>): CadreUIMessage {
    for (const chunk of this.#chunks.end(fallback)) this.#builder.apply(chunk);
    return this.#builder.message();
  }
}

/** A tool output as a stored answer keeps it: whole when small, else its head and how long it was. */
export function storedOutput(output: unknown, limit = STORED_OUTPUT_CHARS): unknown {
  if (output === undefined) return undefined;
  if (typeof output === 'string') {
    return output.length <= limit
      ? output
      : `${output.slice(0, limit)}… [cut: ${output.length} characters in all; the run tree has the whole output]`;
  }
  const json = JSON.stringify(output) ?? '';
  if (json.length <= limit) return output;
  return `${json.slice(0, limit)}… [cut: ${json.length} characters of JSON in all; the run tree has the whole output]`;
}

type Part = CadreUIMessage['parts'][number];

interface RunFold {
  text: string[];
  steps: number;
  toolCalls: Map<string, RunToolCallView>;
  plan?: PlanStep[];
}

/**
 * Builds the assistant message to store from the very chunks sent on the wire, the way AI SDK's
 * `readUIMessageStream` builds it in the browser, plus what the browser folds from the transient
 * `data-run-event` parts (each run's `text`, `toolCalls`, `plan`) and each summary in full. Reading it back
 * therefore shows what was seen live. Constant work per chunk (parts are found through maps).
 */
export class AnswerMessageBuilder {
  readonly #parts: Part[] = [];
  #id = '';
  #metadata: ChatMessageMetadata | undefined;
  #textParts = new Map<string, { type: 'text' | 'reasoning'; text: string; state?: string }>();
  #toolParts = new Map<string, Record<string, unknown>>();
  #runParts = new Map<string, { type: 'data-run'; id: string; data: RunPartData }>();
  #folds = new Map<string, RunFold>();
  #rootRunId: string | undefined;

  apply(chunk: CadreChunk): void {
    switch (chunk.type) {
      case 'start':
        if (chunk.messageId) this.#id = chunk.messageId;
        if (chunk.messageMetadata) this.#mergeMetadata(chunk.messageMetadata as ChatMessageMetadata);
        return;
      case 'message-metadata':
        this.#mergeMetadata(chunk.messageMetadata as ChatMessageMetadata);
        return;
      case 'start-step':
        this.#parts.push({ type: 'step-start' });
        return;
      case 'text-start':
      case 'reasoning-start': {
        const part = {
          type: chunk.type === 'text-start' ? 'text' : 'reasoning',
          text: '',
          state: 'streaming',
        } as const;
        const mutable = { ...part } as { type: 'text' | 'reasoning'; text: string; state?: string };
        this.#textParts.set(chunk.id, mutable);
        this.#parts.push(mutable as Part);
        return;
      }
      case 'text-delta':
      case 'reasoning-delta': {
        const part = this.#textParts.get(chunk.id);
        if (part) part.text += chunk.delta;
        if (chunk.type === 'text-delta' && this.#rootRunId)
          this.#fold(this.#rootRunId).text.push(chunk.delta);
        return;
      }
      case 'text-end':
      case 'reasoning-end': {
        const part = this.#textParts.get(chunk.id);
        if (part) part.state = 'done';
        this.#textParts.delete(chunk.id);
        return;
      }
      case 'tool-input-available': {
        const part: Record<string, unknown> = {
          type: 'dynamic-tool',
          toolName: chunk.toolName,
          toolCallId: chunk.toolCallId,
          state: 'input-available',
          input: chunk.input,
          // What the wire carried beside the input (e.g. that an earlier result was reused) is kept too.
          ...(chunk.title !== undefined ? { title: chunk.title } : {}),
          ...(chunk.toolMetadata !== undefined ? { toolMetadata: chunk.toolMetadata } : {}),
        };
        this.#toolParts.set(chunk.toolCallId, part);
        this.#parts.push(part as Part);
        if (this.#rootRunId)
          this.#fold(this.#rootRunId).toolCalls.set(chunk.toolCallId, {
            id: chunk.toolCallId,
            name: chunk.toolName,
            input: chunk.input,
          });
        return;
      }
      case 'tool-output-available':
      case 'tool-output-error': {
        const part = this.#toolParts.get(chunk.toolCallId);
        if (!part) return;
        if (chunk.type === 'tool-output-available') {
          part.state = 'output-available';
          part.output = chunk.output;
        } else {
          part.state = 'output-error';
          part.errorText = chunk.errorText;
        }
        const call = this.#rootRunId
          ? this.#folds.get(this.#rootRunId)?.toolCalls.get(chunk.toolCallId)
          : undefined;
        if (call) {
          call.ok = chunk.type === 'tool-output-available';
          if (chunk.type === 'tool-output-available') call.output = chunk.output;
          else call.error = chunk.errorText;
        }
        return;
      }
      case 'data-run': {
        const data = chunk.data;
        if (data.parentRunId === null) this.#rootRunId ??= data.runId;
        const existing = this.#runParts.get(data.runId);
        if (existing) existing.data = data;
        else {
          const part = { type: 'data-run' as const, id: data.runId, data };
          this.#runParts.set(data.runId, part);
          this.#parts.push(part);
        }
        return;
      }
      case 'data-run-event':
        this.#foldEvent(chunk.data);
        return;
      default:
        return;
    }
  }

  #foldEvent(event: CadreEvent): void {
    const fold = this.#fold(event.runId);
    switch (event.type) {
      case 'text-delta':
        fold.text.push(event.delta);
        return;
      case 'tool-call':
        fold.toolCalls.set(event.toolCallId, {
          id: event.toolCallId,
          name: event.name,
          input: event.input,
          ...(event.refused ? { refused: event.refused } : {}),
          ...(event.deduplicated ? { deduplicated: true } : {}),
          ...(event.reused ? { reused: event.reused } : {}),
        });
        return;
      case 'tool-result': {
        const call = fold.toolCalls.get(event.toolCallId);
        if (!call) return;
        call.ok = event.ok;
        call.ms = event.ms;
        if (event.output !== undefined) call.output = event.output;
        if (event.error !== undefined) call.error = event.error;
        return;
      }
      case 'plan-update':
        fold.plan = event.steps;
        return;
      case 'step-finish':
        fold.steps += 1;
        return;
      default:
        return;
    }
  }

  #fold(runId: string): RunFold {
    let fold = this.#folds.get(runId);
    if (!fold) {
      fold = { text: [], steps: 0, toolCalls: new Map() };
      this.#folds.set(runId, fold);
    }
    return fold;
  }

  #mergeMetadata(metadata: ChatMessageMetadata): void {
    this.#metadata = { ...this.#metadata, ...metadata };
  }

  /** The message as stored: data-run parts carry their folded history and their summary in full. */
  message(): CadreUIMessage {
    const parts = this.#parts.map((part) => {
      // A delegation's output is its envelope, which the page reads to find the child's card: kept whole.
      if (part.type === 'dynamic-tool' && part.state === 'output-available' && !isEnvelopeLike(part.output))
        return { ...part, output: storedOutput(part.output) };
      if (part.type !== 'data-run') return part;
      const fold = this.#folds.get(part.data.runId);
      const { summaryChars, ...data } = part.data;
      const text = fold?.text.join('') ?? '';
      const stored: RunPartData = {
        ...data,
        ...(summaryChars !== undefined ? { summary: text.trimEnd().slice(-summaryChars) } : {}),
        text,
        toolCalls: fold
          ? [...fold.toolCalls.values()].map((call) =>
              call.output === undefined ? call : { ...call, output: storedOutput(call.output) },
            )
          : [],
        ...(fold?.plan ? { plan: fold.plan } : {}),
        ...(fold?.steps ? { steps: fold.steps } : {}),
      };
      return { ...part, data: stored };
    });
    return {
      id: this.#id,
      role: 'assistant',
      parts,
      ...(this.#metadata ? { metadata: this.#metadata } : {}),
    };
  }
}

/** A delegation's tool output: the child's result envelope (without its summary, see protocol.ts). */
function isEnvelopeLike(output: unknown): boolean {
  const candidate = output as { runId?: unknown; status?: unknown } | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.runId === 'string' &&
    typeof candidate.status === 'string'
  );
}
