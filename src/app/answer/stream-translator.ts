import type { JSONObject } from '@ai-sdk/provider';
import type { InferUIMessageChunk } from 'ai';
import type { ResultEnvelope } from '../../core/envelope.ts';
import type { CadreEvent } from '../../core/events.ts';
import type { RunProjection } from '../../core/run-view.ts';
import type { CadreUIMessage, ChatMessageMetadata } from './protocol.ts';
import { runPart } from './run-part.ts';

/** One chunk of Cadre's UI message stream. */
export type CadreChunk = InferUIMessageChunk<CadreUIMessage>;

/**
 * Translates a tree's events into UI message stream chunks, one event at a time and in constant work per
 * event (see protocol.ts for what goes where and why nothing is sent twice). The root run's text and
 * tool calls become text and dynamic tool parts in AI SDK's step structure; every run gets a `data-run`
 * part at its start and end, rendered from its view (the projector's, which the caller folded the event
 * into first: the translator keeps no picture of the runs of its own); everything else travels as
 * transient `data-run-event` parts.
 */
export class ChatStreamTranslator {
  readonly #projection: Pick<RunProjection, 'get' | 'started'>;
  #rootRunId: string | undefined;
  #stepOpen = false;
  #textId: string | undefined;
  #reasoningId: string | undefined;
  #blocks = 0;

  /** `projection`: where the tree's events are folded, each before it is translated. */
  constructor(projection: Pick<RunProjection, 'get' | 'started'>) {
    this.#projection = projection;
  }

  /** The chunks that open the message. */
  start(messageId: string, metadata: ChatMessageMetadata): CadreChunk[] {
    return [{ type: 'start', messageId, messageMetadata: metadata }];
  }

  /** The chunks for one event of the tree (already folded into the projection). */
  translate(event: CadreEvent): CadreChunk[] {
    const chunks: CadreChunk[] = [];
    const run = this.#projection.get(event.runId);
    if (!run || !this.#projection.started(event.runId)) return chunks;
    if (event.type === 'run-start') {
      if (!event.parentRunId) this.#rootRunId ??= event.runId;
      chunks.push({ type: 'data-run', id: event.runId, data: runPart(run) });
      return chunks;
    }
    const isRoot = event.runId === this.#rootRunId;
    switch (event.type) {
      case 'text-delta':
        if (!isRoot) break;
        this.#openStep(chunks);
        this.#closeReasoning(chunks);
        if (!this.#textId) {
          this.#textId = `text-${this.#blocks++}`;
          chunks.push({ type: 'text-start', id: this.#textId });
        }
        chunks.push({ type: 'text-delta', id: this.#textId, delta: event.delta });
        return chunks;
      case 'reasoning-delta':
        if (!isRoot) break;
        this.#openStep(chunks);
        this.#closeText(chunks);
        if (!this.#reasoningId) {
          this.#reasoningId = `reasoning-${this.#blocks++}`;
          chunks.push({ type: 'reasoning-start', id: this.#reasoningId });
        }
        chunks.push({ type: 'reasoning-delta', id: this.#reasoningId, delta: event.delta });
        return chunks;
      case 'tool-call':
        if (!isRoot) break;
        this.#openStep(chunks);
        this.#closeBlocks(chunks);
        chunks.push({
          type: 'tool-input-available',
          toolCallId: event.toolCallId,
          toolName: event.name,
          input: event.input,
          dynamic: true,
          // How the call was answered besides running (an earlier question's result reused, the same request
          // earlier in this answer, refused before it ran): the web app says it in words, the store keeps it.
          ...toolMetadataOf(event),
        });
        return chunks;
      case 'tool-result':
        if (!isRoot) break;
        this.#openStep(chunks);
        this.#closeBlocks(chunks);
        if (event.ok) {
          chunks.push({
            type: 'tool-output-available',
            toolCallId: event.toolCallId,
            output: this.#wireOutput(event.output),
            dynamic: true,
          });
        } else {
          chunks.push({
            type: 'tool-output-error',
            toolCallId: event.toolCallId,
            errorText: event.error ?? 'the tool failed',
            dynamic: true,
          });
        }
        return chunks;
      case 'step-finish':
        if (isRoot && this.#stepOpen) {
          this.#closeBlocks(chunks);
          chunks.push({ type: 'finish-step' });
          this.#stepOpen = false;
        }
        break;
      case 'run-message':
        // A background run's result, or a person's message, reached the main agent: what it writes next
        // is a new paragraph under a line saying so, or under the person's words (kept with the answer, so
        // a reload shows it too).
        if (isRoot) {
          this.#closeBlocks(chunks);
          if (event.background)
            chunks.push({ type: 'data-background', id: event.messageId, data: event.background });
          else chunks.push({ type: 'data-said', id: event.messageId, data: { text: event.text } });
        }
        break;
      case 'run-finish': {
        if (isRoot) this.#closeBlocks(chunks);
        chunks.push({ type: 'data-run', id: event.runId, data: runPart(run) });
        if (isRoot && this.#stepOpen) {
          chunks.push({ type: 'finish-step' });
          this.#stepOpen = false;
        }
        return chunks;
      }
      default:
        break;
    }
    chunks.push({ type: 'data-run-event', data: event, transient: true });
    return chunks;
  }

  /** A delegation's envelope without its summary, which the child's `data-run` part already carries. */
  #wireOutput(output: unknown): unknown {
    if (!isEnvelope(output) || !this.#projection.get(output.runId)) return output;
    const { summary: _summary, ...rest } = output;
    return rest;
  }

  #openStep(chunks: CadreChunk[]): void {
    if (this.#stepOpen) return;
    chunks.push({ type: 'start-step' });
    this.#stepOpen = true;
  }

  #closeText(chunks: CadreChunk[]): void {
    if (!this.#textId) return;
    chunks.push({ type: 'text-end', id: this.#textId });
    this.#textId = undefined;
  }

  #closeReasoning(chunks: CadreChunk[]): void {
    if (!this.#reasoningId) return;
    chunks.push({ type: 'reasoning-end', id: this.#reasoningId });
    this.#reasoningId = undefined;
  }

  #closeBlocks(chunks: CadreChunk[]): void {
    this.#closeText(chunks);
    this.#closeReasoning(chunks);
  }
}

/** An agent tool's output: a result envelope (a run id, a status and a summary). */
function isEnvelope(output: unknown): output is ResultEnvelope {
  const candidate = output as Partial<ResultEnvelope> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.runId === 'string' &&
    typeof candidate.status === 'string' &&
    typeof candidate.summary === 'string'
  );
}

/** What a root tool call carries beside its input: reused, deduplicated or refused (absent when none). */
function toolMetadataOf(event: {
  reused?: { runId: string; finishedAt: string } | undefined;
  deduplicated?: boolean | undefined;
  refused?: string | undefined;
}): { toolMetadata?: JSONObject } {
  const metadata: JSONObject = {
    ...(event.reused ? { reused: event.reused } : {}),
    ...(event.deduplicated ? { deduplicated: true } : {}),
    ...(event.refused ? { refused: event.refused } : {}),
  };
  return Object.keys(metadata).length ? { toolMetadata: metadata } : {};
}
