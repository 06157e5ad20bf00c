import type { CadreEvent } from '../../core/events.ts';
import type { RunProjection } from '../../core/run-view.ts';
import type { Pricing } from '../pricing.ts';
import { AnswerChunks } from './answer-chunks.ts';
import type { CadreUIMessage, ChatMessageMetadata, RunPartData } from './protocol.ts';
import { storedOutput, storedRunPart } from './run-part.ts';
import type { CadreChunk } from './stream-translator.ts';

export { STORED_OUTPUT_CHARS, storedOutput } from './run-part.ts';

/**
 * The stored form of an answer, built from its tree's events as they happen: the events folded once
 * (AnswerChunks' projection: each run's view) and translated once into the chunks the wire carries, which
 * make the message's parts; each run's part takes its history from its view. Every door stores its
 * answers this way.
 */
export class AnswerRecorder {
  readonly #chunks: AnswerChunks;
  readonly #builder = new AnswerMessageBuilder();

  constructor(answerId: string, sessionId: string, pricing?: Pricing) {
    this.#chunks = new AnswerChunks(answerId, sessionId, pricing);
    for (const chunk of this.#chunks.start()) this.#builder.apply(chunk);
  }

  /** The answer's runs, folded once from its events (the stored parts and the tree are read from it). */
  get projection(): RunProjection {
    return this.#chunks.projection;
  }

  event(event: CadreEvent): void {
    for (const chunk of this.#chunks.event(event)) this.#builder.apply(chunk);
  }

  /** The message to store once the tree has ended (`fallback` says how when its root never finished). */
  message(fallback?: Pick<ChatMessageMetadata, 'status'>): CadreUIMessage {
    for (const chunk of this.#chunks.end(fallback)) this.#builder.apply(chunk);
    return this.#builder.message(this.#chunks.projection);
  }
}

type Part = CadreUIMessage['parts'][number];

/**
 * Builds the assistant message to store from the very chunks sent on the wire, the way AI SDK's
 * `readUIMessageStream` builds it in the browser; each run's part then takes what the browser folds from
 * the transient `data-run-event` parts (its `text`, `toolCalls`, `plan`, `steps`) from the run's view, and
 * its summary in full. Reading it back therefore shows what was seen live. Constant work per chunk (parts
 * are found through maps).
 */
export class AnswerMessageBuilder {
  readonly #parts: Part[] = [];
  #id = '';
  #metadata: ChatMessageMetadata | undefined;
  #textParts = new Map<string, { type: 'text' | 'reasoning'; text: string; state?: string }>();
  #toolParts = new Map<string, Record<string, unknown>>();
  #runParts = new Map<string, { type: 'data-run'; id: string; data: RunPartData }>();

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
        return;
      }
      case 'data-background':
      case 'data-said':
        this.#parts.push({ type: chunk.type, id: chunk.id, data: chunk.data } as Part);
        return;
      case 'data-run': {
        const data = chunk.data;
        const existing = this.#runParts.get(data.runId);
        if (existing) existing.data = data;
        else {
          const part = { type: 'data-run' as const, id: data.runId, data };
          this.#runParts.set(data.runId, part);
          this.#parts.push(part);
        }
        return;
      }
      default:
        return;
    }
  }

  #mergeMetadata(metadata: ChatMessageMetadata): void {
    this.#metadata = { ...this.#metadata, ...metadata };
  }

  /** The message as stored: data-run parts carry their history (from `projection`) and their summary whole. */
  message(projection: Pick<RunProjection, 'get'>): CadreUIMessage {
    const parts = this.#parts.map((part) => {
      // A delegation's output is its envelope, which the page reads to find the child's card: kept whole.
      if (part.type === 'dynamic-tool' && part.state === 'output-available' && !isEnvelopeLike(part.output))
        return { ...part, output: storedOutput(part.output) };
      if (part.type !== 'data-run') return part;
      return { ...part, data: storedRunPart(part.data, projection.get(part.data.runId)) };
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
