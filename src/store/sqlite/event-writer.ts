import { SystemError } from '../../core/errors.ts';
import type { CadreEvent } from '../../core/events.ts';
import { DEFAULT_PAYLOAD_THRESHOLD } from '../payloads.ts';
import { currentOwner, type RunOwner, runsStartedHere } from '../run-owner.ts';
import type { Database } from './database.ts';
import { EventRows, type JournalAttempt, type JournalEntry } from './event-rows.ts';
import type { Spool, SpoolRecord } from './spool.ts';
import { type Pending, replayedItems, WriterSpool } from './writer-spool.ts';

export type { JournalAttempt, JournalEntry } from './event-rows.ts';

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
   * slices only, never the spool, which costs the loop least; a kill may lose the last `delayMs` of events.
   * A run journal's entries are secured either way (they are what a resume needs).
   */
  durability?: 'step' | 'batched';
  /**
   * Where events and journal entries are secured until a slice puts them in SQLite (see spool.ts); without
   * one (an in-memory database), securing commits them at once.
   */
  spool?: Spool;
  /** Called on the first write, e.g. to start background checkpoints. */
  onFirstWrite?: () => void;
  /** Called once a slice has committed a tree's start or end (its root's): chat lists are told. */
  onRootChange?: () => void;
  /** Called after each committed slice (the checkpointer looks at the WAL then, not on a timer). */
  onWritten?: () => void;
}

/** SQLite's result codes for a lock another connection holds: worth waiting for, nothing is wrong. */
const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;
/** How often a slice that found the database locked (after waiting its busy timeout) is tried again. */
const LOCKED_RETRIES = 5;
/** Written items the queue keeps before it drops them, when the queue has not emptied meanwhile. */
const COMPACT_AFTER_ITEMS = 1_024;

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
  #rows: EventRows;
  #queue: Pending[] = [];
  #head = 0;
  /** Queue entries before this index are in the spool. */
  #spooled = 0;
  #spool: WriterSpool | undefined;
  /** A slice failed and none has succeeded since: the failure was reported, its repeats are not. */
  #failing = false;
  #lockedRetries = 0;
  /** Items dropped after failed writes, while applyAll collects them. */
  #dropped: Pending[] | undefined;
  #onFirstWrite: (() => void) | undefined;
  readonly #onRootChange: (() => void) | undefined;
  readonly #onWritten: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #immediate: NodeJS.Immediate | undefined;
  #idle: Array<() => void> = [];
  #delayMs: number;
  #sliceMs: number;
  #secureSoon: ReadonlySet<CadreEvent['type']>;
  /** Something queued must be secured by the next barrier (or the end of this turn). */
  #unsecured = false;
  /** Queue entries before this index must be secured (the last one that asked for it, and all before). */
  #secureEnd = 0;
  #endOfTurn: NodeJS.Immediate | undefined;
  #closed = false;
  /**
   * The longest the writer has held the event loop at once, for benchmarks and diagnostics; `queueLength`
   * is what the queue holds after the last slice (written items it still keeps included).
   */
  readonly stats = { longestSliceMs: 0, longestSecureMs: 0, slices: 0, spoolAppends: 0, queueLength: 0 };

  constructor(db: Database, options: EventWriterOptions = {}) {
    this.#db = db;
    const threshold = options.payloadThreshold ?? DEFAULT_PAYLOAD_THRESHOLD;
    this.#rows = new EventRows(db, options.owner ?? currentOwner(), threshold);
    this.#delayMs = options.delayMs ?? 20;
    this.#sliceMs = options.sliceMs ?? 2;
    this.#secureSoon = options.durability === 'batched' ? new Set() : SECURE_SOON;
    const report = (error: unknown) => this.onWriteError(error);
    // With `batched` durability only journal entries and attempts are secured: a journal's securing does
    // not serialise every event queued before it.
    this.#spool =
      options.spool && new WriterSpool(options.spool, report, { events: options.durability !== 'batched' });
    this.#onFirstWrite = options.onFirstWrite;
    this.#onRootChange = options.onRootChange;
    this.#onWritten = options.onWritten;
  }

  /**
   * Reported when a write fails (a full disk, a file locked for longer than the busy timeout), once per
   * run of failures. A locked file is waited for; otherwise what could not be written stays in the spool,
   * which is kept for the next start to apply.
   */
  onWriteError: (error: unknown) => void = (error) => {
    process.stderr.write(`cadre: could not store run events: ${(error as Error).message}\n`);
  };

  enqueue(event: CadreEvent): void {
    if (this.#closed) return;
    if (event.type === 'run-start') runsStartedHere.add(event.runId);
    else if (event.type === 'run-finish') runsStartedHere.delete(event.runId);
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

  /**
   * Queues an attempt of a journal's tree (journal-store.ts `begin`), secured with its root run's start
   * (before the run's first model request): a commit of its own would hold the loop on every ask.
   */
  enqueueAttempt(attempt: JournalAttempt): void {
    // Like an event: a run starting while the process closes its store (its callers do not wait) is not
    // recorded, rather than failing somewhere nobody listens.
    if (this.#closed) return;
    this.#push({ kind: 'attempt', attempt });
    this.#secureThisTurn();
  }

  /** True when an entry of this journal is queued and not yet in the table. */
  holdsJournal(journalId: string): boolean {
    for (let index = this.#head; index < this.#queue.length; index++) {
      const item = this.#queue[index]!;
      if (item.kind === 'journal' && item.entry.journalId === journalId) return true;
    }
    return false;
  }

  /** True when an attempt (of any journal) is queued and not yet in the table. */
  holdsAttempt(): boolean {
    for (let index = this.#head; index < this.#queue.length; index++) {
      if (this.#queue[index]!.kind === 'attempt') return true;
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
    for (const item of replayedItems(records)) this.#push(item);
  }

  /**
   * Applies everything queued now (a reader in this process needs it at once). A database locked by
   * another process leaves the rest queued for the writer's next try.
   */
  applyNow(): void {
    if (this.#writeQueued(true)) this.#settle();
    else this.#retryLater();
  }

  /**
   * Applies everything queued now, without waiting for a lock more than once; returns what did not reach
   * the table (dropped, and kept in the spool when there is one).
   */
  applyAll(): Pending[] {
    const dropped: Pending[] = [];
    this.#dropped = dropped;
    this.#writeQueued(false);
    this.#dropped = undefined;
    this.#settle();
    return dropped;
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

  /** After a slice found the database locked: the next try waits a little longer each time. */
  #retryLater(): void {
    if (this.#immediate) clearImmediate(this.#immediate);
    this.#immediate = undefined;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#drain(), this.#delayMs * this.#lockedRetries);
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
    if (this.#spool && !this.#spool.broken) {
      try {
        const started = performance.now();
        // What slices have written since the last append needs no spooling.
        this.#spool.append(this.#queue, Math.max(this.#spooled, this.#head));
        this.#spooled = this.#queue.length;
        this.stats.spoolAppends++;
        this.stats.longestSecureMs = Math.max(this.stats.longestSecureMs, performance.now() - started);
        this.#schedule();
        return;
      } catch (error) {
        // A full disk or a removed folder: commit instead, which may fail the same way and says so.
        this.onWriteError(error);
      }
    }
    // Without a spool only what must be secured is committed now; text queued after it keeps to slices.
    if (!this.#writeQueued(true, true)) this.#retryLater();
    else if (this.#head >= this.#queue.length) this.#settle();
    else this.#schedule();
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
    this.#writeQueued(false);
    this.#settle();
    this.#spool?.close();
  }

  #drain(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#immediate = undefined;
    if (!this.#slice(this.#sliceMs, true)) this.#retryLater();
    else if (this.#head < this.#queue.length) this.#immediate = setImmediate(() => this.#drain());
    else this.#settle();
  }

  /**
   * Slices until the queue is written (or only what must be secured); false when the database stayed locked (`waitForLock`) and the rest
   * is still queued. Each failed slice drops at least one item, so this ends.
   */
  #writeQueued(waitForLock: boolean, onlySecured = false): boolean {
    // The end is read again after each slice: a failed one may have dropped an item before it.
    const end = () => (onlySecured ? Math.min(this.#secureEnd, this.#queue.length) : this.#queue.length);
    while (this.#head < end()) {
      if (!this.#slice(Number.POSITIVE_INFINITY, waitForLock, end())) return false;
    }
    return true;
  }

  #settle(): void {
    this.#queue = [];
    this.#head = 0;
    this.#spooled = 0;
    this.#secureEnd = 0;
    this.stats.queueLength = 0;
    // Everything spooled is in the database now.
    this.#spool?.empty();
    const waiting = this.#idle;
    this.#idle = [];
    for (const resolve of waiting) resolve();
  }

  /**
   * One transaction: items in order until the queue is empty or `budgetMs` has passed. False when the
   * database was locked and `waitForLock` asks to try again later (the items stay queued). Any other
   * failure drops the item that failed (or, when the transaction itself failed, the rest of the queue):
   * the spool keeps it, and a run's events never stop being written because of one of them.
   */
  #slice(budgetMs: number, waitForLock: boolean, end = this.#queue.length): boolean {
    if (this.#head >= end) return true;
    const started = performance.now();
    const first = this.#head;
    let failed: number | undefined;
    try {
      // IMMEDIATE: the write lock is taken (waiting for another process's commit) before the first read,
      // so the slice can never fail half-way trying to upgrade a read snapshot another process moved past.
      this.#db.exec('BEGIN IMMEDIATE');
      do {
        const item = this.#queue[this.#head]!;
        failed = this.#head;
        if (item.kind === 'event') this.#rows.writeEvent(item.event, item.json, item.replayed === true);
        else if (item.kind === 'journal') this.#rows.writeJournal(item.entry);
        else this.#rows.writeAttempt(item.attempt);
        failed = undefined;
        this.#head++;
      } while (this.#head < end && performance.now() - started < budgetMs);
      this.#db.exec('COMMIT');
    } catch (error) {
      return this.#failed(error, first, failed, waitForLock);
    }
    this.#failing = false;
    this.#lockedRetries = 0;
    this.stats.slices++;
    this.stats.longestSliceMs = Math.max(this.stats.longestSliceMs, performance.now() - started);
    const rootChanged = this.#onRootChange && this.#startsOrEndsTree(first, this.#head);
    this.#written(first);
    if (rootChanged) this.#onRootChange?.();
    this.#onWritten?.();
    return true;
  }

  /** Whether the queue's items `from`..`to` hold a root's `run-start` or `run-finish`. */
  #startsOrEndsTree(from: number, to: number): boolean {
    for (let index = from; index < to; index++) {
      const item = this.#queue[index]!;
      if (item.kind !== 'event' || item.event.parentRunId !== null) continue;
      if (item.event.type === 'run-start' || item.event.type === 'run-finish') return true;
    }
    return false;
  }

  #failed(error: unknown, first: number, failed: number | undefined, waitForLock: boolean): boolean {
    if (this.#db.isTransaction) this.#db.exec('ROLLBACK');
    // The cursors handed out in the failed slice were not stored; re-read them from the table.
    for (let index = first; index <= this.#head && index < this.#queue.length; index++) {
      const item = this.#queue[index]!;
      if (item.kind === 'event') this.#rows.forgetCursor(item.event);
    }
    this.#head = first;
    if (!this.#failing) this.onWriteError(error);
    this.#failing = true;
    const code = (error as { errcode?: number }).errcode ?? 0;
    const locked = (code & 0xff) === SQLITE_BUSY || (code & 0xff) === SQLITE_LOCKED;
    if (locked && waitForLock && this.#lockedRetries < LOCKED_RETRIES) {
      this.#lockedRetries++;
      return false;
    }
    this.#lockedRetries = 0;
    // The item SQLite refused, or all the rest when the transaction itself could not start or commit. What
    // is dropped from the queue stays in the spool, kept for the next process to apply.
    const from = failed ?? first;
    const dropped = this.#queue.slice(from, failed === undefined ? undefined : failed + 1);
    this.#spool?.keep(this.#queue, Math.max(this.#spooled, this.#head), dropped);
    this.#dropped?.push(...dropped);
    this.#queue.splice(from, dropped.length);
    this.#spooled = this.#queue.length;
    if (this.#secureEnd > from) this.#secureEnd = Math.max(from, this.#secureEnd - dropped.length);
    return true;
  }

  /**
   * After a slice committed the items from `first`: the spool is emptied once the table has everything
   * in it, and the queue lets go of written items, so neither grows while the queue never empties (a
   * sustained load the slices only just keep up with).
   */
  #written(first: number): void {
    const spool = this.#spool;
    if (spool) {
      spool.written(this.#queue, first, Math.min(this.#head, this.#spooled));
      if (this.#head >= this.#spooled) spool.empty();
      else if (spool.wantsRewrite) spool.rewrite(this.#queue, this.#head, this.#spooled);
    }
    if (this.#head >= COMPACT_AFTER_ITEMS && this.#head * 2 >= this.#queue.length) {
      this.#queue.splice(0, this.#head);
      this.#spooled = Math.max(0, this.#spooled - this.#head);
      this.#secureEnd = Math.max(0, this.#secureEnd - this.#head);
      this.#head = 0;
    }
    this.stats.queueLength = this.#queue.length;
  }
}
