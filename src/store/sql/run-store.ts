import type { CadreEvent } from '../../core/events.ts';
import { buildRunTree, type RunTree } from '../../core/run-tree.ts';
import type { RunState } from '../../core/status.ts';
import { eventPage } from '../payloads.ts';
import { runSummary } from '../run-rows.ts';
import type { EventPage, KeptConversation, RunMessage, RunStore, RunSummary, StoredEvent } from '../store.ts';
import { pruneRunTrees, removeRunTree } from './run-trees.ts';
import type { SqlDatabase } from './sql-database.ts';

/** What each backend does its own way for the run store: how events are written, how stops travel. */
export interface RunRecording {
  /** Queues an event (never blocks the run). */
  record(event: CadreEvent): void;
  /** Makes what was recorded survive a kill of this process. */
  secure(): void | Promise<void>;
  /** Resolves once everything recorded so far is in the tables. */
  flush(): Promise<void>;
  /** Before trees are removed, what must be in the tables first (SQLite: what dead processes spooled). */
  beforeRemoving(): void;
  /**
   * A stop was asked of a running tree (`alone` false: `runId` is its root) or of one run in it alone:
   * tell whoever runs it.
   */
  stopAsked(runId: string, reason: string, alone: boolean): void | Promise<void>;
  /** A message was left for a running run: tell whoever runs it. */
  messageSent(runId: string): void | Promise<void>;
}

/**
 * Runs and their events over the SQL port. Recording only queues (each backend's event writer commits
 * off the run's hot path); every read first waits for what this process has queued, so it sees its own
 * runs as they were recorded. Run trees are rebuilt from the events with the same fold the CLI uses live,
 * so what is read back is what was printed. Each backend's store adds what it alone does (the sweep of
 * interrupted runs, stop and event notifications).
 */
export class SqlRunStore
  implements Pick<RunStore, Exclude<keyof RunStore, 'markInterrupted' | 'watchStops'>>
{
  protected readonly sql: SqlDatabase;
  protected readonly recording: RunRecording;

  constructor(sql: SqlDatabase, recording: RunRecording) {
    this.sql = sql;
    this.recording = recording;
  }

  record(event: CadreEvent): void {
    this.recording.record(event);
  }

  secure(): void | Promise<void> {
    return this.recording.secure();
  }

  flush(): Promise<void> {
    return this.recording.flush();
  }

  async listRuns(
    userId: string,
    options: { limit?: number; sessionId?: string; status?: RunState } = {},
  ): Promise<RunSummary[]> {
    await this.flush();
    // A filter left out matches every row (`… IS NULL`), so one statement serves every combination.
    const runs = await this.sql.all<Record<string, any>>(
      `SELECT id, agent, task, status, summary, model, session_id, started_at, ended_at, envelope
       FROM runs WHERE parent_id IS NULL AND user_id = ?
         AND (CAST(? AS TEXT) IS NULL OR session_id = ?) AND (CAST(? AS TEXT) IS NULL OR status = ?)
       ORDER BY started_at DESC, ${this.sql.dialect.rowid ?? 'position'} DESC LIMIT ?`,
      [
        userId,
        options.sessionId ?? null,
        options.sessionId ?? null,
        options.status ?? null,
        options.status ?? null,
        options.limit ?? 50,
      ],
    );
    const text = (value: unknown) => (typeof value === 'string' ? this.sql.dialect.readText(value) : value);
    return runs.map((run) => runSummary({ ...run, task: text(run.task), summary: text(run.summary) }));
  }

  async rootOf(userId: string, runId: string): Promise<string | undefined> {
    await this.flush();
    const run = await this.sql.one<{ root_id: string }>(
      'SELECT root_id FROM runs WHERE id = ? AND user_id = ?',
      [runId, userId],
    );
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
    const limited = options.limit !== undefined;
    const rows = await this.sql.each<{ root_seq: number; body: string; payload: string | null }>(
      `SELECT e.root_seq, e.body, p.body AS payload FROM events e LEFT JOIN payloads p ON p.hash = e.payload_hash
       WHERE e.root_id = ? AND e.root_seq > ? ORDER BY e.root_seq${limited ? ' LIMIT ?' : ''}`,
      limited ? [rootRunId, options.after ?? 0, options.limit] : [rootRunId, options.after ?? 0],
    );
    return eventPage(rows, options.maxChars);
  }

  async removeTree(userId: string, rootRunId: string): Promise<boolean> {
    this.recording.beforeRemoving();
    await this.flush();
    return removeRunTree(this.sql, rootRunId, userId);
  }

  async prune(userId: string, options: { before: number }): Promise<number> {
    this.recording.beforeRemoving();
    await this.flush();
    return pruneRunTrees(this.sql, options.before, userId);
  }

  async requestStop(userId: string, runId: string, reason: string): Promise<boolean> {
    await this.flush();
    const run = await this.sql.one<{ parent_id: string | null }>(
      `SELECT parent_id FROM runs WHERE id = ? AND user_id = ? AND status = 'running'`,
      [runId, userId],
    );
    if (!run) return false;
    // Keyed by the run to stop: a tree's root, or one run of it stopped alone. Asked again while the first
    // is not yet taken: still asked (a row counts as written either way).
    await this.sql.run(
      `INSERT INTO run_stop_requests (root_id, user_id, reason, requested_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (root_id) DO UPDATE SET root_id = excluded.root_id`,
      [runId, userId, reason, Date.now()],
    );
    await this.recording.stopAsked(runId, reason, run.parent_id !== null);
    return true;
  }

  async sendMessage(userId: string, runId: string, message: RunMessage): Promise<boolean> {
    await this.flush();
    const sent = await this.sql.run(
      `INSERT INTO run_messages (id, run_id, user_id, text, sent_at)
       SELECT ?, id, user_id, ?, ? FROM runs WHERE id = ? AND user_id = ? AND status = 'running'
       ON CONFLICT (id) DO NOTHING`,
      [message.id, message.text, Date.now(), runId, userId],
    );
    if (!sent) return false;
    await this.recording.messageSent(runId);
    return true;
  }

  async takeMessages(runIds: readonly string[]): Promise<Array<RunMessage & { runId: string }>> {
    if (!runIds.length) return [];
    const taken = await this.sql.all<{ id: string; run_id: string; text: string; sent_at: number }>(
      `DELETE FROM run_messages WHERE run_id IN (${runIds.map(() => '?').join(', ')})
       RETURNING id, run_id, text, sent_at`,
      runIds,
    );
    return taken
      .sort((a, b) => Number(a.sent_at) - Number(b.sent_at) || a.id.localeCompare(b.id))
      .map((row) => ({ id: row.id, runId: row.run_id, text: row.text }));
  }

  async keepConversation(
    userId: string,
    runId: string,
    kept: { conversation: string | null; chars: number },
  ): Promise<void> {
    const text = kept.conversation === null ? null : this.sql.dialect.storedText(kept.conversation);
    await this.sql.run(
      `INSERT INTO run_conversations (run_id, user_id, conversation, chars, kept_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (run_id) DO UPDATE SET conversation = excluded.conversation, chars = excluded.chars,
         kept_at = excluded.kept_at`,
      [runId, userId, text, kept.chars, Date.now()],
    );
  }

  async keptConversation(userId: string, runId: string): Promise<KeptConversation | undefined> {
    await this.flush();
    // A sub-agent's row names no session: its tree's root's does. The conversation is the run's user's only.
    const run = await this.sql.one<{
      id: string;
      agent: string;
      root_id: string;
      parent_id: string | null;
      status: RunState;
      session_id: string | null;
      conversation: string | null;
      chars: number | null;
    }>(
      `SELECT r.id, r.agent, r.root_id, r.parent_id, r.status, root.session_id, c.conversation, c.chars
       FROM runs r JOIN runs root ON root.id = r.root_id
         LEFT JOIN run_conversations c ON c.run_id = r.id AND c.user_id = r.user_id
       WHERE r.id = ? AND r.user_id = ?`,
      [runId, userId],
    );
    if (!run) return undefined;
    return {
      runId: run.id,
      agent: run.agent,
      rootRunId: run.root_id,
      parentId: run.parent_id,
      sessionId: run.session_id,
      status: run.status,
      ...(run.conversation === null
        ? {}
        : { messages: JSON.parse(this.sql.dialect.readText(run.conversation)) }),
      ...(run.chars === null ? {} : { chars: Number(run.chars) }),
    };
  }

  async takeStopRequests(runIds: readonly string[]): Promise<Map<string, string>> {
    if (!runIds.length) return new Map();
    const taken = await this.sql.all<{ root_id: string; reason: string }>(
      `DELETE FROM run_stop_requests WHERE root_id IN (${runIds.map(() => '?').join(', ')})
       RETURNING root_id, reason`,
      runIds,
    );
    return new Map(taken.map((row) => [row.root_id, row.reason]));
  }
}
