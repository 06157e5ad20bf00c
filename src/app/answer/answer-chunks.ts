import type { CadreEvent, RunFinishEvent } from '../../core/events.ts';
import { RunProjection } from '../../core/run-view.ts';
import { addCosts, type Cost, costOf, type Pricing, unpricedCost } from '../pricing.ts';
import type { ChatMessageMetadata } from './protocol.ts';
import { type CadreChunk, ChatStreamTranslator } from './stream-translator.ts';

/**
 * One answer as UI message chunks, from its tree's events: the opening `start` (the answer's message id
 * and session), the tree's events translated, the root run's id as soon as it starts, and at the end how
 * the tree ended. The wire (`POST /api/chat`, a page attaching to a running answer) and the stored form
 * are both made of these chunks, so what a reload shows is what was seen live.
 */
export class AnswerChunks {
  /** The one fold of the answer's events: the runs' views the parts are rendered from. */
  readonly projection = new RunProjection();
  readonly #translator = new ChatStreamTranslator(this.projection);
  readonly #answerId: string;
  readonly #sessionId: string;
  #rootRunId: string | undefined;
  #rootFinish: RunFinishEvent | undefined;
  #delegated = false;
  readonly #pricing: Pricing | undefined;
  /** The subtree costs of each running run's finished children (for its own subtree's). */
  readonly #childCosts = new Map<string, Array<{ cost: Cost | undefined; tokens: number }>>();
  #rootCost: Cost | undefined;

  /** `pricing`: the configured prices; runs on a priced model get `cost` and `subtreeCost`. */
  constructor(answerId: string, sessionId: string, pricing?: Pricing) {
    this.#answerId = answerId;
    this.#sessionId = sessionId;
    this.#pricing = pricing && Object.keys(pricing).length > 0 ? pricing : undefined;
  }

  start(): CadreChunk[] {
    return this.#translator.start(this.#answerId, { sessionId: this.#sessionId });
  }

  /** The chunks for one event; none for an event of a run told again (a replay: its number again). */
  event(event: CadreEvent): CadreChunk[] {
    if (!this.projection.apply(event)) return [];
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
    if (this.#pricing) this.#price(event, chunks);
    return chunks;
  }

  /** Adds what a run cost to its closing `data-run` part: its own tokens, and its subtree's. */
  #price(event: CadreEvent, chunks: CadreChunk[]): void {
    const pricing = this.#pricing;
    if (!pricing) return;
    if (event.type !== 'run-finish') return;
    const cost =
      costOf(pricing, this.projection.get(event.runId)?.model ?? '', event.usage) ??
      unpricedCost(pricing, event.usage.totalTokens);
    const children = this.#childCosts.get(event.runId) ?? [];
    const parts = [{ cost, tokens: event.usage.totalTokens }, ...children];
    // Tokens of the subtree no finished run accounts for (a child that never reported) have no price.
    const counted = parts.reduce((sum, part) => sum + part.tokens, 0);
    const rest = event.subtreeUsage.totalTokens - counted;
    const subtreeCost = addCosts(rest > 0 ? [...parts, { cost: undefined, tokens: rest }] : parts);
    this.#childCosts.delete(event.runId);
    if (event.parentRunId) {
      const siblings = this.#childCosts.get(event.parentRunId) ?? [];
      siblings.push({ cost: subtreeCost, tokens: event.subtreeUsage.totalTokens });
      this.#childCosts.set(event.parentRunId, siblings);
    } else if (event.runId === this.#rootRunId) this.#rootCost = subtreeCost;
    for (const chunk of chunks)
      if (chunk.type === 'data-run' && chunk.id === event.runId)
        chunk.data = {
          ...chunk.data,
          ...(cost ? { cost } : {}),
          ...(subtreeCost ? { subtreeCost } : {}),
        };
  }

  /** The closing chunks: how the tree ended (from its root's `run-finish`, or `fallback` without one). */
  end(fallback?: Pick<ChatMessageMetadata, 'status'>): CadreChunk[] {
    const finish = this.#rootFinish;
    const metadata: ChatMessageMetadata = {
      sessionId: this.#sessionId,
      ...(this.#rootRunId ? { rootRunId: this.#rootRunId } : {}),
      ...(finish ? { status: finish.status, usage: finish.subtreeUsage } : (fallback ?? {})),
      ...(finish && this.#rootCost ? { cost: this.#rootCost } : {}),
      delegationUsed: this.#delegated,
    };
    return [{ type: 'message-metadata', messageMetadata: metadata }, { type: 'finish' }];
  }
}
