import type { CadreEvent, EventBus } from '../core/events.ts';
import { buildRunTree, type RunTree } from '../core/run-tree.ts';
import type { RunState } from '../core/status.ts';
import { type Database, transaction } from './database.ts';
import { currentOwner, type RunOwner } from './run-owner.ts';
import { safeJson } from './safe-json.ts';

export interface RunSummaryRow {
  id: string;
  agent: string;
  task: string;
  status: RunState;
  summary: string;
  model: string;
  sessionId: string | null;
  startedAt: string;
  endedAt: string | null;
  totalTokens: number | null;
}

/**
 * Events written the moment they happen rather than with the next batch. A tool result is published before
 * the model sees it in its next request, so committing it here means a kill (SIGKILL, a closed terminal,
 * power cut short of the disk) never loses a result the model already acted on; the same holds for a
 * finished step and for a run's start and end. Text deltas, the bulk of events, still go in batches.
 */
const COMMIT_AT_ONCE = new Set<CadreEvent['type']>([
  'run-start',
  'tool-result',
  'step-finish',
  'run-finish',
  'run-error',
]);

export interface RunStoreOptions {
  /** Events kept in memory before a write; a crash loses at most these. */
  batchSize?: number;
  /** Longest an event waits in memory before it is written, in milliseconds. */
  flushIntervalMs?: number;
  userId?: string;
  /** The process that runs what is recorded (defaults to this one); see markInterruptedRuns. */
  owner?: RunOwner;
}

/**
 * Persists events in batches: each batch is one transaction that appends the events and keeps the `runs`
 * rows (one per run, for listing) in step. Run trees are rebuilt from the events with the same fold the
 * CLI uses live, so what is read back is what was printed.
 */
export class RunStore {
  #db: Database;
  #pending: CadreEvent[] = [];
  #timer: NodeJS.Timeout | undefined;
  #roots = new Map<string, string>();
  #batchSize: number;
  #flushIntervalMs: number;
  #userId: string;
  #owner: RunOwner;
  #insertEvent;
  #insertRun;
  #finishRun;

  constructor(db: Database, options: RunStoreOptions = {}) {
    this.#db = db;
    this.#batchSize = options.batchSize ?? 256;
    this.#flushIntervalMs = options.flushIntervalMs ?? 100;
    this.#userId = options.userId ?? 'local';
    this.#owner = options.owner ?? currentOwner();
    this.#insertEvent = db.prepare(
      'INSERT OR IGNORE INTO events (run_id, root_id, seq, type, time, body) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.#insertRun = db.prepare(
      `INSERT OR IGNORE INTO runs (id, parent_id, root_id, session_id, user_id, agent, task, model, depth, status, started_at, owner_pid, owner_host)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?)`,
    );
    this.#finishRun = db.prepare(
      'UPDATE runs SET status = ?, summary = ?, envelope = ?, ended_at = ? WHERE id = ?',
    );
  }

  /** Starts persisting every event published on `bus`; returns a function that stops it. */
  attach(bus: EventBus): () => void {
    return bus.subscribe((event) => this.record(event));
  }

  record(event: CadreEvent): void {
    this.#pending.push(event);
    if (this.#pending.length >= this.#batchSize || COMMIT_AT_ONCE.has(event.type)) this.flush();
    else this.#timer ??= setTimeout(() => this.#flushFromTimer(), this.#flushIntervalMs);
  }

  /** A failed write from the timer is reported, never thrown: nothing would catch it there. */
  #flushFromTimer(): void {
    try {
      this.flush();
    } catch (error) {
      this.onWriteError(error);
    }
  }

  /** Called when a timed write fails (a full disk, a locked file). The events of that batch are lost. */
  onWriteError: (error: unknown) => void = (error) => {
    process.stderr.write(`cadre: could not store run events: ${(error as Error).message}\n`);
  };

  /** Writes every pending event now. */
  flush(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (!this.#pending.length) return;
    const batch = this.#pending;
    this.#pending = [];
    transaction(this.#db, () => {
      for (const event of batch) this.#write(event);
    });
  }

  #write(event: CadreEvent): void {
    const rootId = this.#rootOf(event);
    const { runId, seq, type, time } = event;
    this.#insertEvent.run(runId, rootId, seq, type, time, safeJson(event));
    if (event.type === 'run-start') {
      this.#insertRun.run(
        runId,
        event.parentRunId,
        rootId,
        event.sessionId ?? null,
        this.#userId,
        event.agent,
        event.task,
        event.model,
        event.depth,
        time,
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
        runId,
      };
      this.#finishRun.run(event.status, event.summary, safeJson(envelope), time, runId);
      if (event.parentRunId === null) this.#forgetTree(runId);
    }
  }

  /** A finished root ends its tree: its runs' roots need no remembering (a server runs for weeks). */
  #forgetTree(rootId: string): void {
    for (const [runId, root] of this.#roots) if (root === rootId) this.#roots.delete(runId);
  }

  #rootOf(event: CadreEvent): string {
    const known = this.#roots.get(event.runId);
    if (known) return known;
    const root = event.parentRunId
      ? (this.#roots.get(event.parentRunId) ?? this.#lookupRoot(event.parentRunId))
      : event.runId;
    this.#roots.set(event.runId, root);
    return root;
  }

  #lookupRoot(runId: string): string {
    const row = this.#db.prepare('SELECT root_id FROM runs WHERE id = ?').get(runId) as
      | { root_id: string }
      | undefined;
    return row?.root_id ?? runId;
  }

  /** Root runs, newest first. */
  listRuns(options: { limit?: number; userId?: string } = {}): RunSummaryRow[] {
    this.flush();
    const rows = this.#db
      .prepare(
        `SELECT r.id, r.agent, r.task, r.status, r.summary, r.model, r.session_id, r.started_at, r.ended_at, r.envelope
         FROM runs r WHERE r.parent_id IS NULL AND r.user_id = ? ORDER BY r.started_at DESC, r.rowid DESC LIMIT ?`,
      )
      .all(options.userId ?? this.#userId, options.limit ?? 50) as Array<Record<string, any>>;
    return rows.map((row) => ({
      id: row.id,
      agent: row.agent,
      task: row.task,
      status: row.status,
      summary: row.summary,
      model: row.model,
      sessionId: row.session_id,
      startedAt: new Date(row.started_at).toISOString(),
      endedAt: row.ended_at === null ? null : new Date(row.ended_at).toISOString(),
      totalTokens: row.envelope ? (JSON.parse(row.envelope).subtreeUsage?.totalTokens ?? null) : null,
    }));
  }

  /** The tree rooted at `runId` (or the subtree, when `runId` is a child), or undefined. */
  getRunTree(runId: string, options: { userId?: string } = {}): RunTree | undefined {
    this.flush();
    const run = this.#db
      .prepare('SELECT root_id FROM runs WHERE id = ? AND user_id = ?')
      .get(runId, options.userId ?? this.#userId) as { root_id: string } | undefined;
    if (!run) return undefined;
    return buildRunTree(this.events(run.root_id), runId);
  }

  /** The root of the tree holding `runId`, if that run is the user's. */
  rootId(runId: string, options: { userId?: string } = {}): string | undefined {
    this.flush();
    const row = this.#db
      .prepare('SELECT root_id FROM runs WHERE id = ? AND user_id = ?')
      .get(runId, options.userId ?? this.#userId) as { root_id: string } | undefined;
    return row?.root_id;
  }

  /** Every event of a tree, in the order they were recorded. */
  events(rootId: string, afterRowId = 0): CadreEvent[] {
    const rows = this.#db
      .prepare('SELECT body FROM events WHERE root_id = ? AND rowid > ? ORDER BY rowid')
      .all(rootId, afterRowId) as Array<{ body: string }>;
    return rows.map((row) => JSON.parse(row.body) as CadreEvent);
  }

  /** Stops the timer and writes what is pending. */
  close(): void {
    this.flush();
  }
}
