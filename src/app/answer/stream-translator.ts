import type { JSONObject } from '@ai-sdk/provider';
import type { InferUIMessageChunk } from 'ai';
import type { ResultEnvelope } from '../../core/envelope.ts';
import type { CadreEvent, RunStartEvent } from '../../core/events.ts';
import type { CadreUIMessage, ChatMessageMetadata, RunPartData } from './protocol.ts';

/** One chunk of Cadre's UI message stream. */
export type CadreChunk = InferUIMessageChunk<CadreUIMessage>;

interface RunState {
  header: RunPartData;
  /** The run's streamed text, kept to tell whether its summary is the end of it. */
  text: string[];
}

/**
 * Translates a tree's events into UI message stream chunks, one event at a time and in constant work per
 * event (see protocol.ts for what goes where and why nothing is sent twice). The root run's text and
 * tool calls become text and dynamic tool parts in AI SDK's step structure; every run gets a `data-run`
 * part at its start and end; everything else travels as transient `data-run-event` parts.
 */
export class ChatStreamTranslator {
  #runs = new Map<string, RunState>();
  #rootRunId: string | undefined;
  #stepOpen = false;
  #textId: string | undefined;
  #reasoningId: string | undefined;
  #blocks = 0;
  /** Every run id of the tree, so a tool output that is one of its envelopes is recognised. */
  #treeRuns = new Set<string>();

  /** The chunks that open the message. */
  start(messageId: string, metadata: ChatMessageMetadata): CadreChunk[] {
    return [{ type: 'start', messageId, messageMetadata: metadata }];
  }

  /** The chunks for one event of the tree. */
  translate(event: CadreEvent): CadreChunk[] {
    const chunks: CadreChunk[] = [];
    if (event.type === 'run-start') {
      const header = this.#open(event);
      chunks.push({ type: 'data-run', id: event.runId, data: header });
      return chunks;
    }
    const run = this.#runs.get(event.runId);
    if (!run) return chunks;
    const isRoot = event.runId === this.#rootRunId;
    switch (event.type) {
      case 'text-delta':
        run.text.push(event.delta);
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
      case 'run-error':
        run.header = { ...run.header, error: event.message };
        break;
      case 'run-finish': {
        if (isRoot) this.#closeBlocks(chunks);
        const text = run.text.join('').trimEnd();
        const fromText = event.summary.length > 0 && text.endsWith(event.summary);
        const data: RunPartData = {
          ...run.header,
          status: event.status,
          endedAt: event.time,
          ...(fromText ? { summaryChars: event.summary.length } : { summary: event.summary }),
          ...(event.data !== undefined ? { data: event.data } : {}),
          ...(event.sources ? { sources: event.sources } : {}),
          usage: event.usage,
          subtreeUsage: event.subtreeUsage,
        };
        run.header = data;
        chunks.push({ type: 'data-run', id: event.runId, data });
        if (isRoot && this.#stepOpen) {
          chunks.push({ type: 'finish-step' });
          this.#stepOpen = false;
        }
        // A finished child's history is no longer needed here: memory follows what is still running.
        if (!isRoot) this.#runs.delete(event.runId);
        return chunks;
      }
      default:
        break;
    }
    chunks.push({ type: 'data-run-event', data: event, transient: true });
    return chunks;
  }

  #open(event: RunStartEvent): RunPartData {
    const parent = event.parentRunId ? this.#runs.get(event.parentRunId) : undefined;
    if (!event.parentRunId) this.#rootRunId ??= event.runId;
    const rootRunId = parent?.header.rootRunId ?? this.#rootRunId ?? event.runId;
    this.#treeRuns.add(event.runId);
    const header: RunPartData = {
      runId: event.runId,
      parentRunId: event.parentRunId,
      rootRunId,
      depth: event.depth,
      agent: event.agent,
      task: event.task,
      model: event.model,
      status: 'running',
      startedAt: event.time,
      ...(event.parentToolCallId ? { parentToolCallId: event.parentToolCallId } : {}),
    };
    this.#runs.set(event.runId, { header, text: [] });
    return header;
  }

  /** A delegation's envelope without its summary, which the child's `data-run` part already carries. */
  #wireOutput(output: unknown): unknown {
    if (!isEnvelope(output) || !this.#treeRuns.has(output.runId)) return output;
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
