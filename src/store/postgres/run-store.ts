import type { CadreEvent } from '../../core/events.ts';
import { buildRunTree, type RunTree } from '../../core/run-tree.ts';
import type { RunState } from '../../core/status.ts';
import type { JobQueue } from '../job-queue.ts';
import { eventPage } from '../payloads.ts';
import { runSummary } from '../run-rows.ts';
import type { EventPage, RunStore, RunSummary, StoredEvent } from '../store.ts';
import { type Database, endSessionsOfDeadProcesses } from './database.ts';
import type { EventWriter } from './event-writer.ts';
import type { Notifications } from './notifications.ts';
import { interruptTrees, markInterruptedRuns, pruneRunTrees, removeRunTree } from './run-maintenance.ts';
import { decoded } from './text.ts';
import { orphanedJobs } from './worker-leases.ts';

/**
 * The PostgreSQL run store. Recording only queues (see event-writer.ts); every read first waits for what
 * this process has queued, so it sees its own runs as they were recorded. Run trees are rebuilt from the
 * events with the same fold the CLI uses live.
 */
export class PostgresRunStore implements RunStore {
  #db: Database;
  #writer: EventWriter;

  #notifications: Notifications;
  /** The queue, opened only when a gone worker's jobs are to be reaped (set by the store). */
  reapWith: (() => Promise<JobQueue>) | undefined;

  constructor(db: Database, writer: EventWriter, notifications: Notifications) {
    this.#db = db;
    this.#writer = writer;
    this.#notifications = notifications;
  }

  /** Calls `onChange` whenever any process stores events of the tree (and after a lost connection). */
  watch(rootRunId: string, onChange: () => void): Promise<() => void> {
    return this.#notifications.listen('events', (root) => {
      if (root === rootRunId || root === '*') onChange();
    });
  }

  record(event: CadreEvent): void {
    this.#writer.enqueueEvent(event);
  }

  /** Before a model request: what was recorded so far is committed, so it survives this process. */
  secure(): Promise<void> {
    return this.#writer.flush();
  }

  flush(): Promise<void> {
    return this.#writer.flush();
  }

  async listRuns(
    userId: string,
    options: { limit?: number; sessionId?: string; status?: RunState } = {},
  ): Promise<RunSummary[]> {
    await this.flush();
    const { rows } = await this.#db.query(
      `SELECT id, agent, task, status, summary, model, session_id, started_at, ended_at, envelope
       FROM runs WHERE parent_id IS NULL AND user_id = $1
         AND ($2::text IS NULL OR session_id = $2) AND ($3::text IS NULL OR status = $3)
       ORDER BY started_at DESC, position DESC LIMIT $4`,
      [userId, options.sessionId ?? null, options.status ?? null, options.limit ?? 50],
    );
    return rows.map((row) => runSummary(decoded(row, ['task', 'summary'])));
  }

  async rootOf(userId: string, runId: string): Promise<string | undefined> {
    await this.flush();
    const { rows } = await this.#db.query<{ root_id: string }>(
      'SELECT root_id FROM runs WHERE id = $1 AND user_id = $2',
      [runId, userId],
    );
    return rows[0]?.root_id;
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
    const { rows } = await this.#db.query<{ root_seq: number; body: string; payload: string | null }>(
      `SELECT e.root_seq, e.body, p.body AS payload FROM events e LEFT JOIN payloads p ON p.hash = e.payload_hash
       WHERE e.root_id = $1 AND e.root_seq > $2 ORDER BY e.root_seq LIMIT $3`,
      [rootRunId, options.after ?? 0, options.limit ?? null],
    );
    return eventPage(rows, options.maxChars);
  }

  async removeTree(userId: string, rootRunId: string): Promise<boolean> {
    await this.flush();
    return removeRunTree(this.#db, rootRunId, userId);
  }

  async prune(userId: string, options: { before: number }): Promise<number> {
    await this.flush();
    return pruneRunTrees(this.#db, options.before, userId);
  }

  async requestStop(userId: string, rootRunId: string, reason: string): Promise<boolean> {
    await this.flush();
    const { rowCount } = await this.#db.query(
      `INSERT INTO run_stop_requests (root_id, user_id, reason, requested_at)
       SELECT id, user_id, $3, $4 FROM runs
       WHERE id = $1 AND user_id = $2 AND parent_id IS NULL AND status = 'running'
       ON CONFLICT (root_id) DO UPDATE SET root_id = excluded.root_id`,
      [rootRunId, userId, reason, Date.now()],
    );
    if (!rowCount) return false;
    // Workers running parts of the tree stop them when told; the row stays for jobs not yet started.
    await this.#notifications.notify(this.#db, 'stop', JSON.stringify({ root: rootRunId, reason }));
    return true;
  }

  async takeStopRequests(rootRunIds: readonly string[]): Promise<Map<string, string>> {
    if (!rootRunIds.length) return new Map();
    const { rows } = await this.#db.query<{ root_id: string; reason: string }>(
      'DELETE FROM run_stop_requests WHERE root_id = ANY($1::text[]) RETURNING root_id, reason',
      [rootRunIds],
    );
    return new Map(rows.map((row) => [row.root_id, row.reason]));
  }

  async markInterrupted(): Promise<string[]> {
    await this.flush();
    await endSessionsOfDeadProcesses(this.#db);
    const marked = await markInterruptedRuns(this.#db, this.#writer);
    // Runs as jobs: a worker that is gone (its lease let go) left jobs. Each goes back on the queue when a
    // live worker can take it; else its tree is closed `interrupted` here, for a person to resume.
    if (!this.reapWith || !(await orphanedJobs(this.#db)).length) return marked;
    const { givenUp } = await (await this.reapWith()).reap();
    if (!givenUp.length) return marked;
    marked.push(...(await interruptTrees(this.#db, this.#writer, givenUp)));
    // A part of the tree still running on a live worker (a sub-agent) has no parent to answer any more.
    for (const rootRunId of new Set(givenUp.map((job) => job.rootRunId)))
      await this.#notifications.notify(
        this.#db,
        'stop',
        JSON.stringify({ root: rootRunId, reason: 'its tree was interrupted' }),
      );
    return marked;
  }
}
