import type { StatementSync } from 'node:sqlite';
import type { ModelMessage } from 'ai';
import type { JournalKind, TreeJournal } from '../core/journal.ts';
import { outputJson } from '../core/output-json.ts';
import type { Database } from './database.ts';
import type { EventWriter } from './event-writer.ts';
import type { Migration } from './migrations.ts';
import { inflatePayloads } from './payloads.ts';

/** What a resumed attempt needs to start the root run again exactly as the first attempt did. */
export interface ResumeSpec {
  agent: string;
  task: string;
  history: ModelMessage[];
  inputs: Record<string, unknown>;
  sessionId?: string;
  /**
   * The stored question the tree answers (its id and when it was stored): when the person sends it again
   * or edits it, it is replaced, and the tree's answer has no place in the session any more.
   */
  question?: { id: string; createdAt: string };
  model?: string;
  prefetch?: { agent: string; task?: string };
  /** The question was sent again: its sub-agents run anew (see RunRequest.freshResults). */
  freshResults?: boolean;
}

/** A journal found by one of its attempts' root run ids. */
export interface FoundJournal {
  journalId: string;
  userId: string;
  spec: ResumeSpec;
  /** Root run ids of every attempt, oldest first. */
  attempts: string[];
}

/**
 * Run journals: one row per completed model step or tool result, in commit order. Several attempts of
 * one tree (the first, then each resume) share a journal id, and each attempt's root run id is recorded
 * with it, so `resume` works from any of them.
 */
export interface JournalStore {
  /** A new tree's journal (an id no attempt has used): nothing to read, each commit secured as `put` says. */
  create(journalId: string): TreeJournal & { entries(): number };
  /** The journal of one tree: its entries read once, each commit secured as `put` says. */
  open(journalId: string): TreeJournal & { entries(): number };
  /** Records an attempt's root run (the first one also records what resuming needs). */
  begin(journalId: string, rootRunId: string, userId: string, spec: ResumeSpec): Promise<void>;
  /** The journal an attempt belongs to, when the run is the caller's root run. */
  find(userId: string, rootRunId: string): Promise<FoundJournal | undefined>;
}

export const journalMigration: Migration = {
  id: '010-run-journal',
  sql: `
    CREATE TABLE journal (
      journal_id TEXT NOT NULL,
      position INTEGER NOT NULL,
      run_key TEXT NOT NULL,
      kind TEXT NOT NULL,
      key TEXT NOT NULL,
      body TEXT NOT NULL,
      PRIMARY KEY (journal_id, position),
      UNIQUE (journal_id, run_key, kind, key)
    );
    CREATE TABLE journal_attempts (
      root_run_id TEXT PRIMARY KEY,
      journal_id TEXT NOT NULL,
      user_id TEXT NOT NULL,
      spec TEXT NOT NULL,
      started_at INTEGER NOT NULL
    );
    CREATE INDEX journal_attempts_by_journal ON journal_attempts(journal_id, started_at);
  `,
};

/**
 * A tool result's large output is stored once in `payloads`, under the same hash as the tool-result event
 * that carries it, and the entry refers to it (as events do, see payloads.ts).
 */
export const journalPayloadsMigration: Migration = {
  id: '012-journal-payloads',
  sql: `
    ALTER TABLE journal ADD COLUMN payload_hash TEXT;
    CREATE INDEX journal_payload ON journal(payload_hash) WHERE payload_hash IS NOT NULL;
  `,
};

/** One entry, placed after the journal's last (the store's event writer uses it too). */
export const JOURNAL_INSERT_SQL = `INSERT OR IGNORE INTO journal (journal_id, position, run_key, kind, key, body, payload_hash)
  VALUES (?, (SELECT COALESCE(MAX(position), 0) + 1 FROM journal WHERE journal_id = ?), ?, ?, ?, ?, ?)`;

/** One attempt, recorded once (a spool applied twice, or a second `begin`, changes nothing). */
export const ATTEMPT_INSERT_SQL =
  'INSERT OR IGNORE INTO journal_attempts (root_run_id, journal_id, user_id, spec, started_at) VALUES (?, ?, ?, ?, ?)';

/**
 * The SQLite journal. With the store's event writer, an entry is secured in its spool before `put`
 * returns and reaches the table with the writer's next slice, in order with the run's events; without
 * one it is committed at once (`node:sqlite` writes synchronously). Either survives a SIGKILL.
 */
export class SqliteJournalStore implements JournalStore {
  readonly #db: Database;
  readonly #writer: EventWriter | undefined;
  readonly #recover: () => void;
  #select: StatementSync | undefined;
  #insert: StatementSync | undefined;

  /**
   * `recoverDeadSpools` applies what processes that died since this store opened left in their spools
   * (see spool.ts): a long-lived process (`cadre serve`) resuming a tree another one (`cadre ask`) was
   * running when it was killed needs that tree's last entries and events. `find` (how a resume starts)
   * applies them; `open` of a fresh journal stays off the disk.
   */
  constructor(db: Database, writer?: EventWriter, recoverDeadSpools: () => void = () => {}) {
    this.#db = db;
    this.#writer = writer;
    this.#recover = recoverDeadSpools;
  }

  create(journalId: string): TreeJournal & { entries(): number } {
    return this.#handle(journalId, new Map());
  }

  open(journalId: string): TreeJournal & { entries(): number } {
    // Entries this process secured but has not yet put in the table are read too.
    if (this.#writer?.holdsJournal(journalId)) this.#writer.applyNow();
    const loaded = new Map<string, unknown>();
    this.#select ??= this.#db.prepare(
      `SELECT j.run_key, j.kind, j.key, j.body, p.body AS payload FROM journal j
       LEFT JOIN payloads p ON p.hash = j.payload_hash WHERE j.journal_id = ? ORDER BY j.position`,
    );
    const rows = this.#select.all(journalId) as Array<{
      run_key: string;
      kind: string;
      key: string;
      body: string;
      payload: string | null;
    }>;
    for (const row of rows) {
      const body = inflatePayloads(JSON.parse(row.body), row.payload);
      loaded.set(entryKey(row.run_key, row.kind, row.key), body);
    }
    return this.#handle(journalId, loaded);
  }

  /** A journal over the entries an earlier attempt left (`loaded`); what is put is only counted. */
  #handle(journalId: string, loaded: Map<string, unknown>): TreeJournal & { entries(): number } {
    const writer = this.#writer;
    if (!writer) this.#insert ??= this.#db.prepare(JOURNAL_INSERT_SQL);
    const insert = this.#insert;
    let added = 0;
    return {
      get: (runKey: string, kind: JournalKind, key: string) =>
        loaded.size ? loaded.get(entryKey(runKey, kind, key)) : undefined,
      put: (runKey: string, kind: JournalKind, key: string, body: unknown, when: 'now' | 'soon' = 'now') => {
        const output = kind === 'tool-result' && isOutputResult(body) ? resultJson(body.output) : undefined;
        const text = output === undefined ? JSON.stringify(body ?? null) : okResultBody(output);
        // `soon` (a tool result, a final answer) is secured with the step's events, before the next model
        // request or at the end of this turn; anything else before this returns.
        const entry = {
          journalId,
          runKey,
          kind,
          key,
          body: text,
          ...(output === undefined ? {} : { output, value: (body as { output: object | string }).output }),
        };
        if (writer) writer.enqueueJournal(entry, when === 'now');
        else insert!.run(journalId, journalId, runKey, kind, key, text, null);
        // Read back only by a later attempt, which loads from the table; a replayed entry is not put again.
        if (!loaded.has(entryKey(runKey, kind, key))) added++;
      },
      entries: () => loaded.size + added,
    };
  }

  async begin(journalId: string, rootRunId: string, userId: string, spec: ResumeSpec): Promise<void> {
    const attempt = { journalId, rootRunId, userId, spec: JSON.stringify(spec), startedAt: Date.now() };
    // With the event writer, the attempt is secured with the root run's start, not committed on its own.
    if (this.#writer) this.#writer.enqueueAttempt(attempt);
    else
      this.#db.prepare(ATTEMPT_INSERT_SQL).run(rootRunId, journalId, userId, attempt.spec, attempt.startedAt);
  }

  async find(userId: string, rootRunId: string): Promise<FoundJournal | undefined> {
    // Resuming reads the attempt's tree next: it must have what a dead process secured, and what this one
    // has queued. Any queued attempt counts: a later attempt of the same journal (a resume this process
    // has just started) is the one a resume must continue, or find still running.
    this.#recover();
    if (this.#writer?.holdsAttempt()) this.#writer.applyNow();
    const row = this.#db
      .prepare('SELECT journal_id, user_id FROM journal_attempts WHERE root_run_id = ?')
      .get(rootRunId) as { journal_id: string; user_id: string } | undefined;
    if (!row || row.user_id !== userId) return undefined;
    const attempts = this.#db
      .prepare(
        'SELECT root_run_id, spec FROM journal_attempts WHERE journal_id = ? ORDER BY started_at, rowid',
      )
      .all(row.journal_id) as Array<{ root_run_id: string; spec: string }>;
    return {
      journalId: row.journal_id,
      userId,
      spec: JSON.parse(attempts[0]!.spec) as ResumeSpec,
      attempts: attempts.map((attempt) => attempt.root_run_id),
    };
  }
}

/** A successful tool result whose output is an object or a string (what may be large), and nothing else. */
export function isOutputResult(body: unknown): body is { ok: true; output: object | string } {
  if (typeof body !== 'object' || body === null) return false;
  const { ok, output, ...rest } = body as { ok?: unknown; output?: unknown };
  const large = typeof output === 'string' || (typeof output === 'object' && output !== null);
  return ok === true && large && Object.keys(rest).length === 0;
}

/** A successful tool result entry's body around its output's JSON (`output`, see JournalEntry). */
export function okResultBody(output: string): string {
  return `{"ok":true,"output":${output}}`;
}

/** A tool output's JSON, as its tool-result event's payload makes it (the same text, so the same hash). */
function resultJson(output: object | string): string {
  return typeof output === 'string' ? JSON.stringify(output) : outputJson(output);
}

function entryKey(runKey: string, kind: string, key: string): string {
  return `${runKey}\u0000${kind}\u0000${key}`;
}
