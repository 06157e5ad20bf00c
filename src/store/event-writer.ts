import type { StatementSync } from 'node:sqlite';
import type { CadreEvent } from '../core/events.ts';
import type { Database } from './database.ts';
import { DEFAULT_PAYLOAD_THRESHOLD, splitPayload } from './payloads.ts';
import { currentOwner, type RunOwner } from './run-owner.ts';
import { safeJson } from './safe-json.ts';

/**
 * Events committed the moment they happen rather than with the next slice. A tool result is published
 * before the model sees it in its next request, so committing it here means a kill (SIGKILL, a closed
 * terminal) never loses a result the model already acted on; the same holds for a finished step and for
 * a run's start and end. These are a few small rows per model call; text deltas, the bulk of events, wait
 * for the time-boxed slices.
 */
const COMMIT_AT_ONCE = new Set<CadreEvent['type']>([
  'run-start',
  'tool-result',
  'step-finish',
  'run-finish',
  'run-error',
]);

export interface EventWriterOptions {
  /** How long an event may wait before writing starts, in milliseconds: events arriving meanwhile share it. */
  delayMs?: number;
  /** Longest one transaction may hold the event loop, in milliseconds; the rest waits for the next turn. */
  sliceMs?: number;
  /** Outputs at least this many characters of JSON are stored once and referenced. */
  payloadThreshold?: number;
  /** The process that runs what is recorded (defaults to this one); see markInterruptedRuns. */
  owner?: RunOwner;
  /**
   * `step` (default): tool results, finished steps and run starts and ends are committed the moment they
   * happen, so a kill never loses what a model has seen. `batched`: everything goes in the time-boxed
   * slices, which costs the loop least; a kill may lose the last `delayMs` of events.
   */
  durability?: 'step' | 'batched';
}

/**
 * Writes events to SQLite without stalling the runs that emit them. `node:sqlite` is synchronous, so a
 * big batch in one transaction holds the event loop for as long as it takes (tens of milliseconds under
 * load, during which no stream moves). Instead the queue drains in time-boxed slices: each slice is one
 * transaction that stops taking events after `sliceMs`, and the next slice waits for the event loop's
 * next turn. Every event gets its tree's next cursor in the order it was recorded.
 */
export class EventWriter {
  #db: Database;
  #queue: CadreEvent[] = [];
  #head = 0;
  #timer: NodeJS.Timeout | undefined;
  #immediate: NodeJS.Immediate | undefined;
  #idle: Array<() => void> = [];
  /** The last cursor given in each tree still running; a tree forgets its entry when its root finishes. */
  #cursors = new Map<string, number>();
  #delayMs: number;
  #sliceMs: number;
  #threshold: number;
  #owner: RunOwner;
  #commitAtOnce: ReadonlySet<CadreEvent['type']>;
  #insertEvent: StatementSync;
  #insertPayload: StatementSync;
  #insertRun: StatementSync;
  #finishRun: StatementSync;
  #lastCursor: StatementSync;
  #closed = false;

  constructor(db: Database, options: EventWriterOptions = {}) {
    this.#db = db;
    this.#delayMs = options.delayMs ?? 20;
    this.#sliceMs = options.sliceMs ?? 2;
    this.#threshold = options.payloadThreshold ?? DEFAULT_PAYLOAD_THRESHOLD;
    this.#owner = options.owner ?? currentOwner();
    this.#commitAtOnce = options.durability === 'batched' ? new Set() : COMMIT_AT_ONCE;
    this.#insertEvent = db.prepare(
      `INSERT OR IGNORE INTO events (run_id, root_id, seq, type, time, body, root_seq, payload_hash)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#insertPayload = db.prepare('INSERT OR IGNORE INTO payloads (hash, body) VALUES (?, ?)');
    this.#insertRun = db.prepare(
      `INSERT OR IGNORE INTO runs (id, parent_id, root_id, session_id, user_id, agent, task, model, depth, status, started_at, owner_pid, owner_host)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?)`,
    );
    this.#finishRun = db.prepare(
      'UPDATE runs SET status = ?, summary = ?, envelope = ?, ended_at = ? WHERE id = ?',
    );
    this.#lastCursor = db.prepare('SELECT max(root_seq) AS last FROM events WHERE root_id = ?');
  }

  /** Reported when a slice fails (a full disk, a locked file); that slice's events are lost. */
  onWriteError: (error: unknown) => void = (error) => {
    process.stderr.write(`cadre: could not store run events: ${(error as Error).message}\n`);
  };

  enqueue(event: CadreEvent): void {
    if (this.#closed) return;
    this.#queue.push(event);
    if (this.#commitAtOnce.has(event.type)) {
      // Everything before it goes in the same transaction, so the tree's cursors stay in order.
      this.#slice(Number.POSITIVE_INFINITY);
      if (this.#head >= this.#queue.length) this.#settle();
      return;
    }
    if (!this.#immediate) this.#timer ??= setTimeout(() => this.#drain(), this.#delayMs);
  }

  /** Resolves when everything enqueued so far is written. */
  flush(): Promise<void> {
    if (this.#head >= this.#queue.length) return Promise.resolve();
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#immediate ??= setImmediate(() => this.#drain());
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Writes the rest at once (nothing else is waiting on the loop at exit) and stops. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    if (this.#immediate) clearImmediate(this.#immediate);
    this.#timer = undefined;
    this.#immediate = undefined;
    while (this.#head < this.#queue.length) this.#slice(Number.POSITIVE_INFINITY);
    this.#settle();
  }

  #drain(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#immediate = undefined;
    this.#slice(this.#sliceMs);
    if (this.#head < this.#queue.length) this.#immediate = setImmediate(() => this.#drain());
    else this.#settle();
  }

  #settle(): void {
    this.#queue = [];
    this.#head = 0;
    const waiting = this.#idle;
    this.#idle = [];
    for (const resolve of waiting) resolve();
  }

  /** One transaction: events in order until the queue is empty or `budgetMs` has passed. */
  #slice(budgetMs: number): void {
    if (this.#head >= this.#queue.length) return;
    const started = performance.now();
    const first = this.#head;
    this.#db.exec('BEGIN');
    try {
      do {
        this.#write(this.#queue[this.#head]!);
        this.#head++;
      } while (this.#head < this.#queue.length && performance.now() - started < budgetMs);
      this.#db.exec('COMMIT');
    } catch (error) {
      this.#db.exec('ROLLBACK');
      // The cursors handed out in the failed slice were not stored; re-read them from the table.
      for (let index = first; index < this.#head; index++) {
        this.#cursors.delete(this.#queue[index]!.rootRunId);
      }
      this.onWriteError(error);
    }
  }

  #write(event: CadreEvent): void {
    const rootId = event.rootRunId || event.runId;
    const cursor = this.#nextCursor(rootId);
    const split = splitPayload(event, this.#threshold);
    if (split.payload) this.#insertPayload.run(split.payload.hash, split.payload.json);
    this.#insertEvent.run(
      event.runId,
      rootId,
      event.seq,
      event.type,
      event.time,
      split.body,
      cursor,
      split.payload?.hash ?? null,
    );
    if (event.type === 'run-start') {
      this.#insertRun.run(
        event.runId,
        event.parentRunId,
        rootId,
        event.sessionId ?? null,
        event.userId,
        event.agent,
        event.task,
        event.model,
        event.depth,
        event.time,
        this.#owner.pid,
        this.#owner.host,
      );
    } else if (event.type === 'run-finish') {
      const envelope = {
        status: event.status,
        summary: event.summary,
        data: event.data,
        sources: event.sources,
        usage: event.usage,
        subtreeUsage: event.subtreeUsage,
        runId: event.runId,
      };
      this.#finishRun.run(event.status, event.summary, safeJson(envelope), event.time, event.runId);
      if (event.parentRunId === null) this.#cursors.delete(rootId);
    }
  }

  #nextCursor(rootId: string): number {
    let last = this.#cursors.get(rootId);
    if (last === undefined) {
      const row = this.#lastCursor.get(rootId) as { last: number | null };
      last = row.last ?? 0;
    }
    this.#cursors.set(rootId, last + 1);
    return last + 1;
  }
}
