import type { CadreEvent } from '../../core/events.ts';
import { buildRunTree, type RunTree } from '../../core/run-tree.ts';
import type { RunState } from '../../core/status.ts';
import { eventPage } from '../payloads.ts';
import { runSummary } from '../run-rows.ts';
import type { EventPage, RunStore, RunSummary, StoredEvent } from '../store.ts';
import type { Database } from './database.ts';
import { EventWriter, type EventWriterOptions } from './event-writer.ts';
import { markInterruptedRuns, pruneRunTrees, removeRunTree } from './run-maintenance.ts';
import { StopSignals } from './stop-signals.ts';

/**
 * The SQLite run store. Recording only queues: the writer commits in small, time-boxed transactions off
 * the run's hot path (see event-writer.ts). Run trees are rebuilt from the events with the same fold the
 * CLI uses live, so what is read back is what was printed.
 */
export class SqliteRunStore implements RunStore {
  #db: Database;
  #writer: EventWriter;

  #recover: () => void;
  #stops: StopSignals;

  /**
   * Writes through `writer` (shared with the journal) or a writer of its own made with these options.
   * `recoverDeadSpools` applies dead processes' spools, so a tree one of them left there is removed
   * whole instead of coming back when its spool is applied later.
   */
  constructor(db: Database, writer: EventWriter | EventWriterOptions = {}, recoverDeadSpools = () => {}) {
    this.#db = db;
    this.#stops = new StopSignals(db.location() ?? undefined);
    this.#writer = writer instanceof EventWriter ? writer : new EventWriter(db, writer);
    this.#recover = recoverDeadSpools;
  }

  record(event: CadreEvent): void {
    this.#writer.enqueue(event);
  }

  secure(): void {
    this.#writer.secure();
  }

  flush(): Promise<void> {
    return this.#writer.flush();
  }

  /** The writer's longest stalls of the event loop so far. */
  get writerStats(): EventWriter['stats'] {
    return this.#writer.stats;
  }

  /** Called when a background write fails (a full disk, a locked file). */
  set onWriteError(handler: (error: unknown) => void) {
    this.#writer.onWriteError = handler;
  }

  async listRuns(
    userId: string,
    options: { limit?: number; sessionId?: string; status?: RunState } = {},
  ): Promise<RunSummary[]> {
    await this.flush();
    // A filter left out matches every row (`? IS NULL`), so one statement serves every combination.
    const rows = this.#db
      .prepare(
        `SELECT r.id, r.agent, r.task, r.status, r.summary, r.model, r.session_id, r.started_at, r.ended_at, r.envelope
         FROM runs r WHERE r.parent_id IS NULL AND r.user_id = ?
           AND (? IS NULL OR r.session_id = ?) AND (? IS NULL OR r.status = ?)
         ORDER BY r.started_at DESC, r.rowid DESC LIMIT ?`,
      )
      .all(
        userId,
        options.sessionId ?? null,
        options.sessionId ?? null,
        options.status ?? null,
        options.status ?? null,
        options.limit ?? 50,
      ) as Array<Record<string, any>>;
    return rows.map(runSummary);
  }

  async rootOf(userId: string, runId: string): Promise<string | undefined> {
    await this.flush();
    const run = this.#db
      .prepare('SELECT root_id FROM runs WHERE id = ? AND user_id = ?')
      .get(runId, userId) as { root_id: string } | undefined;
    return run?.root_id;
  }

  async getRunTree(userId: string, runId: string): Promise<RunTree | undefined> {
    const rootId = await this.rootOf(userId, runId);
    if (!rootId) return undefined;
    const events = await this.events(userId, rootId);
    return buildRunTree(
      events.map((stored) => stored.event),
      runId,
    );
  }

  async events(userId: string, rootRunId: string, options: EventPage = {}): Promise<StoredEvent[]> {
    if ((await this.rootOf(userId, rootRunId)) !== rootRunId) return [];
    const rows = this.#db
      .prepare(
        `SELECT e.root_seq, e.body, p.body AS payload FROM events e LEFT JOIN payloads p ON p.hash = e.payload_hash
         WHERE e.root_id = ? AND e.root_seq > ? ORDER BY e.root_seq LIMIT ?`,
      )
      .iterate(rootRunId, options.after ?? 0, options.limit ?? -1) as Iterable<{
      root_seq: number;
      body: string;
      payload: string | null;
    }>;
    return eventPage(rows, options.maxChars);
  }

  async removeTree(userId: string, rootRunId: string): Promise<boolean> {
    this.#recover();
    await this.flush();
    return removeRunTree(this.#db, rootRunId, userId);
  }

  async prune(userId: string, options: { before: number }): Promise<number> {
    this.#recover();
    await this.flush();
    return pruneRunTrees(this.#db, options.before, userId);
  }

  async requestStop(userId: string, rootRunId: string, reason: string): Promise<boolean> {
    await this.flush();
    const running = this.#db
      .prepare("SELECT 1 FROM runs WHERE id = ? AND user_id = ? AND parent_id IS NULL AND status = 'running'")
      .get(rootRunId, userId);
    if (!running) return false;
    this.#db
      .prepare(
        'INSERT INTO run_stop_requests (root_id, user_id, reason, requested_at) VALUES (?, ?, ?, ?) ON CONFLICT (root_id) DO NOTHING',
      )
      .run(rootRunId, userId, reason, Date.now());
    this.#stops.announce();
    return true;
  }

  watchStops(onRequest: () => void): () => void {
    return this.#stops.watch(onRequest);
  }

  async takeStopRequests(rootRunIds: readonly string[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    if (!rootRunIds.length) return found;
    const marks = rootRunIds.map(() => '?').join(', ');
    const rows = this.#db
      .prepare(`DELETE FROM run_stop_requests WHERE root_id IN (${marks}) RETURNING root_id, reason`)
      .all(...rootRunIds) as Array<{ root_id: string; reason: string }>;
    for (const row of rows) found.set(row.root_id, row.reason);
    return found;
  }

  markInterrupted(): Promise<string[]> {
    return markInterruptedRuns(this.#db);
  }

  /** Writes what is pending and stops the writer. */
  close(): Promise<void> {
    return this.#writer.close();
  }
}
