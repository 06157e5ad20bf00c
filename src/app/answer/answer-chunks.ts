import type { CadreEvent, RunFinishEvent } from '../../core/events.ts';
import type { ChatMessageMetadata } from './protocol.ts';
import { type CadreChunk, ChatStreamTranslator } from './stream-translator.ts';

/**
 * One answer as UI message chunks, from its tree's events: the opening `start` (the answer's message id
 * and session), the tree's events translated, the root run's id as soon as it starts, and at the end how
 * the tree ended. The wire (`POST /api/chat`, a page attaching to a running answer) and the stored form
 * are both made of these chunks, so what a reload shows is what was seen live.
 */
export class AnswerChunks {
  readonly #translator = new ChatStreamTranslator();
  readonly #answerId: string;
  readonly #sessionId: string;
  #rootRunId: string | undefined;
  #rootFinish: RunFinishEvent | undefined;
  #delegated = false;

  constructor(answerId: string, sessionId: string) {
    this.#answerId = answerId;
    this.#sessionId = sessionId;
  }

  start(): CadreChunk[] {
    return this.#translator.start(this.#answerId, { sessionId: this.#sessionId });
  }

  event(event: CadreEvent): CadreChunk[] {
    const chunks = this.#translator.translate(event);
    if (event.type === 'run-start') {
      if (event.parentRunId === null) {
        this.#rootRunId ??= event.runId;
        chunks.push({
          type: 'message-metadata',
          messageMetadata: { sessionId: this.#sessionId, rootRunId: event.runId },
        });
      } else this.#delegated = true;
    }
    if (event.type === 'run-finish' && event.runId === this.#rootRunId) this.#rootFinish = event;
    return chunks;
  }

  /** The closing chunks: how the tree ended (from its root's `run-finish`, or `fallback` without one). */
  end(fallback?: Pick<ChatMessageMetadata, 'status'>): CadreChunk[] {
    const finish = this.#rootFinish;
    const metadata: ChatMessageMetadata = {
      sessionId: this.#sessionId,
      ...(this.#rootRunId ? { rootRunId: this.#rootRunId } : {}),
      ...(finish ? { status: finish.status, usage: finish.subtreeUsage } : (fallback ?? {})),
      delegationUsed: this.#delegated,
    };
    return [{ type: 'message-metadata', messageMetadata: metadata }, { type: 'finish' }];
  }
}
