import type { JournalKind, TreeJournal } from '../../core/journal.ts';
import { entryBody } from '../journal-bodies.ts';
import type { FoundJournal, JournalStore, ResumeSpec } from '../journal-store.ts';
import { inflatePayloads } from '../payloads.ts';
import type { SqlDatabase } from './sql-database.ts';

/** A journal entry as a backend's writer takes it: its body's JSON, and a large output's apart. */
export interface JournalEntryRow {
  journalId: string;
  runKey: string;
  kind: string;
  key: string;
  /** JSON. */
  body: string;
  /**
   * A tool result's output as JSON, when `body` is `{"ok":true,"output":<this>}` (see journal-bodies.ts):
   * a large one is stored once, shared with the tool-result event that carries it (see payloads.ts).
   */
  output?: string;
  /**
   * The output itself, with `output`: SQLite's spool writes a large one once when the tool-result event
   * that carries the same value goes in the same append (see sqlite/writer-spool.ts).
   */
  value?: object | string;
}

/** An attempt of a journal's tree (see JournalStore.begin). */
export interface AttemptRow {
  journalId: string;
  rootRunId: string;
  userId: string;
  /** JSON of the ResumeSpec. */
  spec: string;
  startedAt: number;
}

/**
 * How a backend writes the journal: through its event writer, in order with the runs' events, which is
 * where the two backends differ (SQLite secures in a spool and commits in slices; PostgreSQL commits in
 * batches and resolves each write once committed).
 */
export interface JournalWriting {
  /** Before a journal's entries are read: what this process queued of it is in the table. */
  beforeOpen(journalId: string): void | Promise<void>;
  /** Before an attempt is looked up: every attempt this process (or a dead one) secured is in the table. */
  beforeFind(): void | Promise<void>;
  /** Queues an entry, secured before this returns (or its promise resolves) when `now`, else soon. */
  put(entry: JournalEntryRow, now: boolean): void | Promise<void>;
  /** Queues an attempt, secured with its root run's start. */
  begin(attempt: AttemptRow): void | Promise<void>;
}

/**
 * Run journals over the SQL port: the entries of one tree read back in commit order, attempts found by
 * any of their root runs (the caller's only), and the first attempt's spec handed to a resume.
 */
export class SqlJournalStore implements JournalStore {
  readonly #sql: SqlDatabase;
  readonly #writing: JournalWriting;

  constructor(sql: SqlDatabase, writing: JournalWriting) {
    this.#sql = sql;
    this.#writing = writing;
  }

  create(journalId: string): TreeJournal & { entries(): number } {
    return this.#handle(journalId, new Map());
  }

  async open(journalId: string): Promise<TreeJournal & { entries(): number }> {
    // Entries this process secured but has not yet put in the table are read too.
    await this.#writing.beforeOpen(journalId);
    const entries = await this.#sql.all<{
      run_key: string;
      kind: string;
      key: string;
      body: string;
      payload: string | null;
    }>(
      `SELECT j.run_key, j.kind, j.key, j.body, p.body AS payload FROM journal j
       LEFT JOIN payloads p ON p.hash = j.payload_hash WHERE j.journal_id = ? ORDER BY j.position`,
      [journalId],
    );
    const loaded = new Map<string, unknown>();
    for (const entry of entries)
      loaded.set(
        entryKey(entry.run_key, entry.kind, entry.key),
        inflatePayloads(JSON.parse(entry.body), entry.payload),
      );
    return this.#handle(journalId, loaded);
  }

  /** A journal over the entries an earlier attempt left (`loaded`); what is put is only counted. */
  #handle(journalId: string, loaded: Map<string, unknown>): TreeJournal & { entries(): number } {
    const writing = this.#writing;
    let added = 0;
    return {
      get: (runKey: string, kind: JournalKind, key: string) =>
        loaded.size ? loaded.get(entryKey(runKey, kind, key)) : undefined,
      put: (runKey: string, kind: JournalKind, key: string, body: unknown, when: 'now' | 'soon' = 'now') => {
        const { text, output } = entryBody(kind, body);
        // Read back only by a later attempt, which loads from the table; a replayed entry is not put again.
        if (!loaded.has(entryKey(runKey, kind, key))) added++;
        // `soon` (a tool result, a final answer) is secured with the step's events, before the next model
        // request or at the end of this turn; anything else before this returns.
        return writing.put(
          {
            journalId,
            runKey,
            kind,
            key,
            body: text,
            ...(output === undefined ? {} : { output, value: (body as { output: object | string }).output }),
          },
          when === 'now',
        );
      },
      entries: () => loaded.size + added,
    };
  }

  async begin(journalId: string, rootRunId: string, userId: string, spec: ResumeSpec): Promise<void> {
    await this.#writing.begin({
      journalId,
      rootRunId,
      userId,
      spec: JSON.stringify(spec),
      startedAt: Date.now(),
    });
  }

  async find(userId: string, rootRunId: string): Promise<FoundJournal | undefined> {
    // Resuming reads the attempt's tree next: it must have what a dead process secured, and what this one
    // has queued. Any queued attempt counts: a later attempt of the same journal (a resume this process
    // has just started) is the one a resume must continue, or find still running.
    await this.#writing.beforeFind();
    const found = await this.#sql.one<{ journal_id: string; user_id: string }>(
      'SELECT journal_id, user_id FROM journal_attempts WHERE root_run_id = ?',
      [rootRunId],
    );
    if (!found || found.user_id !== userId) return undefined;
    const attempts = await this.#sql.all<{ root_run_id: string; spec: string }>(
      `SELECT root_run_id, spec FROM journal_attempts WHERE journal_id = ?
       ORDER BY started_at, ${this.#sql.dialect.rowid ?? 'position'}`,
      [found.journal_id],
    );
    return {
      journalId: found.journal_id,
      userId,
      spec: JSON.parse(attempts[0]!.spec) as ResumeSpec,
      attempts: attempts.map((attempt) => attempt.root_run_id),
    };
  }
}

function entryKey(runKey: string, kind: string, key: string): string {
  return `${runKey}\u0000${kind}\u0000${key}`;
}
