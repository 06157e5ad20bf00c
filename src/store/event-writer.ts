import type { StatementSync } from 'node:sqlite';
import { SystemError } from '../core/errors.ts';
import type { CadreEvent } from '../core/events.ts';
import type { Database } from './database.ts';
import { JOURNAL_INSERT_SQL } from './journal-store.ts';
import { DEFAULT_PAYLOAD_THRESHOLD, inflatePayloads, type SplitEvent, splitPayload } from './payloads.ts';
import { currentOwner, type RunOwner } from './run-owner.ts';
import { safeJson } from './safe-json.ts';
import { type Spool, type SpoolRecord, spoolLine } from './spool.ts';

/**
 * Events that must be secured before the next model request (the runtime's `beforeModelRequest` barrier
 * calls `secure`) and at the latest within this turn of the event loop: a tool result, a finished step,
 * a run's end. Secured means appended to the spool when there is one (a file database), else committed.
 * A kill (SIGKILL, a closed terminal) then never loses a result a model acted on. Securing waits for the
 * barrier or the end of the turn so one append covers a step's result, its journal entry and its end
 * (measured: 32 appends per scripted delegation at once against 17 this way). The root's end is secured
 * at once: its answer is printed right after. A run's start is secured before its first request, so a
 * sub-agent killed while its model works is still found and marked interrupted. Text deltas go with the
 * next secured event.
 */
const SECURE_SOON = new Set<CadreEvent['type']>([
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
   * `step` (default): tool results, finished steps and run ends are secured before the next model request
   * (see SECURE_SOON), so a kill never loses what a model has seen. `batched`: events go in the time-boxed
   * slices only, which costs the loop least; a kill may lose the last `delayMs` of events.
   */
  durability?: 'step' | 'batched';
  /**
   * Where events and journal entries are secured until a slice puts them in SQLite (see spool.ts); without
   * one (an in-memory database), securing commits them at once.
   */
  spool?: Spool;
  /** Called on the first write, e.g. to start background checkpoints. */
  onFirstWrite?: () => void;
}

/** A journal entry (see journal-store.ts), secured the moment it is put. */
export interface JournalEntry {
  journalId: string;
  runKey: string;
  kind: string;
  key: string;
  /** JSON. */
  body: string;
}

type Pending =
  | { kind: 'event'; event: CadreEvent; split?: SplitEvent; replayed?: true }
  | { kind: 'journal'; entry: JournalEntry };

/**
 * Writes events (and journal entries) to SQLite without stalling the runs that emit them. `node:sqlite` is
 * synchronous, so a big batch in one transaction holds the event loop for as long as it takes (tens of
 * milliseconds under load, during which no stream moves). Instead the queue drains in time-boxed slices:
 * each slice is one transaction that stops taking events after `sliceMs`, and the next slice waits for
 * the event loop's next turn. What must survive a kill is secured first in the spool, one append, so a
 * step's durability costs the run microseconds rather than a commit through four indexes. Every event gets
 * its tree's next cursor in the order it was recorded.
 */
export class EventWriter {
  #db: Database;
  #queue: Pending[] = [];
  #head = 0;
  /** Queue entries before this index are in the spool. */
  #spooled = 0;
  #spool: Spool | undefined;
  /** A slice failed: the spool keeps what SQLite lost, for the next start to apply. */
  #lostWrites = false;
  #onFirstWrite: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #immediate: NodeJS.Immediate | undefined;
  #idle: Array<() => void> = [];
  /** The last cursor given in each tree still running; a tree forgets its entry when its root finishes. */
  #cursors = new Map<string, number>();
  #delayMs: number;
  #sliceMs: number;
  #threshold: number;
  #owner: RunOwner;
  #secureSoon: ReadonlySet<CadreEvent['type']>;
  /** Something queued must be secured by the next barrier (or the end of this turn). */
  #unsecured = false;
  /** Queue entries before this index must be secured (the last one that asked for it, and all before). */
  #secureEnd = 0;
  #endOfTurn: NodeJS.Immediate | undefined;
  #insertEvent: StatementSync;
  #insertPayload: StatementSync;
  #insertJournal: StatementSync;
  #eventExists: StatementSync;
  #insertRun: StatementSync;
  #finishRun: StatementSync;
  #lastCursor: StatementSync;
  #closed = false;
  /** The longest the writer has held the event loop at once, for benchmarks and diagnostics. */
  readonly stats = { longestSliceMs: 0, longestSecureMs: 0, slices: 0, spoolAppends: 0 };

  constructor(db: Database, options: EventWriterOptions = {}) {
    this.#db = db;
    this.#delayMs = options.delayMs ?? 20;
    this.#sliceMs = options.sliceMs ?? 2;
    this.#threshold = options.payloadThreshold ?? DEFAULT_PAYLOAD_THRESHOLD;
    this.#owner = options.owner ?? currentOwner();
    this.#secureSoon = options.durability === 'batched' ? new Set() : SECURE_SOON;
    this.#spool = options.spool;
    this.#onFirstWrite = options.onFirstWrite;
    this.#insertJournal = db.prepare(JOURNAL_INSERT_SQL);
    this.#eventExists = db.prepare('SELECT 1 FROM events WHERE run_id = ? AND seq = ?');
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
    this.#push({ kind: 'event', event });
    if (!this.#secureSoon.has(event.type)) this.#schedule();
    else if (event.parentRunId === null && (event.type === 'run-finish' || event.type === 'run-error'))
      this.#secureNow();
    else this.#secureThisTurn();
  }

  /**
   * Queues a journal entry and secures it (with everything queued before it): before returning when
   * `now` (a model step: no tool may run for a step a kill could lose), else like a tool result event.
   */
  enqueueJournal(entry: JournalEntry, now: boolean): void {
    if (this.#closed)
      throw new SystemError('store_closed', 'A journal entry arrived after the store was closed.', {
        journalId: entry.journalId,
      });
    this.#push({ kind: 'journal', entry });
    if (now) this.#secureNow();
    else this.#secureThisTurn();
  }

  /** True when an entry of this journal is queued and not yet in the table. */
  holdsJournal(journalId: string): boolean {
    for (let index = this.#head; index < this.#queue.length; index++) {
      const item = this.#queue[index]!;
      if (item.kind === 'journal' && item.entry.journalId === journalId) return true;
    }
    return false;
  }

  /** Secures what is queued, if anything queued needs it: the barrier before each model request. */
  secure(): void {
    if (this.#unsecured) this.#secure();
  }

  /**
   * Queues a dead process's spool (see spool.ts) to be applied: events its database already has (by run
   * and sequence) are skipped, the rest get their tree's next cursors in order.
   */
  replay(records: SpoolRecord[]): void {
    const payloads = new Map<string, string>();
    for (const record of records) {
      if (record.kind === 'payload') payloads.set(record.hash, record.json);
      else if (record.kind === 'journal') {
        const { journalId, runKey, entryKind, key, body } = record;
        this.#push({ kind: 'journal', entry: { journalId, runKey, kind: entryKind, key, body } });
      } else {
        const body = JSON.parse(record.body) as Record<string, unknown>;
        const event = inflatePayloads(body, record.payloadHash && (payloads.get(record.payloadHash) ?? null));
        this.#push({ kind: 'event', event: event as CadreEvent, replayed: true });
      }
    }
  }

  /** Applies everything queued now, in one transaction (a reader in this process needs it at once). */
  applyNow(): void {
    while (this.#head < this.#queue.length) this.#slice(Number.POSITIVE_INFINITY);
    this.#settle();
  }

  #push(item: Pending): void {
    if (this.#onFirstWrite) {
      const start = this.#onFirstWrite;
      this.#onFirstWrite = undefined;
      start();
    }
    this.#queue.push(item);
  }

  #schedule(): void {
    if (!this.#immediate) this.#timer ??= setTimeout(() => this.#drain(), this.#delayMs);
  }

  #secureNow(): void {
    this.#secureEnd = this.#queue.length;
    this.#secure();
  }

  /** Secures at the barrier or, at the latest, when this turn of the event loop ends. */
  #secureThisTurn(): void {
    this.#unsecured = true;
    this.#secureEnd = this.#queue.length;
    this.#endOfTurn ??= setImmediate(() => {
      this.#endOfTurn = undefined;
      this.secure();
    });
  }

  /**
   * Makes everything queued survive a kill before returning: appended to the spool, or without one
   * committed (everything before it in the same transaction, so the tree's cursors stay in order).
   */
  #secure(): void {
    this.#unsecured = false;
    if (this.#spool && !this.#lostWrites) {
      try {
        const started = performance.now();
        this.#appendToSpool(this.#spool);
        this.stats.spoolAppends++;
        this.stats.longestSecureMs = Math.max(this.stats.longestSecureMs, performance.now() - started);
        this.#schedule();
        return;
      } catch (error) {
        // A full disk or a removed folder: commit instead, which may fail the same way and says so.
        this.#lostWrites = true;
        this.onWriteError(error);
      }
    }
    // Without a spool only what must be secured is committed now; text queued after it keeps to slices.
    this.#slice(Number.POSITIVE_INFINITY, this.#secureEnd);
    if (this.#head >= this.#queue.length) this.#settle();
    else this.#schedule();
  }

  #appendToSpool(spool: Spool): void {
    let text = '';
    for (; this.#spooled < this.#queue.length; this.#spooled++) {
      const item = this.#queue[this.#spooled]!;
      if (item.kind === 'journal') {
        const { journalId, runKey, kind, key, body } = item.entry;
        text += spoolLine({ kind: 'journal', journalId, runKey, entryKind: kind, key, body });
        continue;
      }
      item.split ??= splitPayload(item.event, this.#threshold);
      const { payload, body } = item.split;
      if (payload) text += spoolLine({ kind: 'payload', hash: payload.hash, json: payload.json });
      text += spoolLine({ kind: 'event', payloadHash: payload?.hash ?? null, body });
    }
    if (text) spool.append(text);
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
    if (this.#endOfTurn) clearImmediate(this.#endOfTurn);
    this.#timer = undefined;
    this.#immediate = undefined;
    this.#endOfTurn = undefined;
    while (this.#head < this.#queue.length) this.#slice(Number.POSITIVE_INFINITY);
    this.#settle();
    this.#spool?.close(this.#lostWrites);
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
    this.#spooled = 0;
    this.#secureEnd = 0;
    // Everything spooled is in the database now.
    if (!this.#lostWrites) this.#spool?.clear();
    const waiting = this.#idle;
    this.#idle = [];
    for (const resolve of waiting) resolve();
  }

  /** One transaction: events in order until the queue is empty or `budgetMs` has passed. */
  #slice(budgetMs: number, end = this.#queue.length): void {
    if (this.#head >= end) return;
    const started = performance.now();
    const first = this.#head;
    // IMMEDIATE: the write lock is taken (waiting for another process's commit) before the first read, so
    // the slice can never fail half-way trying to upgrade a read snapshot another process moved past.
    this.#db.exec('BEGIN IMMEDIATE');
    try {
      do {
        const item = this.#queue[this.#head]!;
        if (item.kind === 'event') this.#write(item);
        else this.#writeJournal(item.entry);
        this.#head++;
      } while (this.#head < end && performance.now() - started < budgetMs);
      this.#db.exec('COMMIT');
      this.stats.slices++;
      this.stats.longestSliceMs = Math.max(this.stats.longestSliceMs, performance.now() - started);
    } catch (error) {
      this.#db.exec('ROLLBACK');
      // The cursors handed out in the failed slice were not stored; re-read them from the table.
      for (let index = first; index < this.#head; index++) {
        const item = this.#queue[index]!;
        if (item.kind === 'event') this.#cursors.delete(item.event.rootRunId || item.event.runId);
      }
      this.#lostWrites = true;
      this.onWriteError(error);
    }
  }

  #writeJournal(entry: JournalEntry): void {
    const { journalId, runKey, kind, key, body } = entry;
    this.#insertJournal.run(journalId, journalId, runKey, kind, key, body);
  }

  #write({ event, split: splitBefore, replayed }: Pending & { kind: 'event' }): void {
    // Only a replayed spool can hold an event the table has; a cursor is given once the row is new.
    if (replayed && this.#eventExists.get(event.runId, event.seq)) return;
    const rootId = event.rootRunId || event.runId;
    const cursor = this.#nextCursor(rootId);
    const split = splitBefore ?? splitPayload(event, this.#threshold);
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
