import type { StatementSync } from 'node:sqlite';
import type { JournalKind, TreeJournal } from '../../core/journal.ts';
import { entryBody } from '../journal-bodies.ts';
import type { FoundJournal, JournalStore, ResumeSpec } from '../journal-store.ts';
import { inflatePayloads } from '../payloads.ts';
import type { Database } from './database.ts';
import type { EventWriter } from './event-writer.ts';
import { ATTEMPT_INSERT_SQL, JOURNAL_INSERT_SQL } from './journal-rows.ts';

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

  async open(journalId: string): Promise<TreeJournal & { entries(): number }> {
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
        const { text, output } = entryBody(kind, body);
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

function entryKey(runKey: string, kind: string, key: string): string {
  return `${runKey}\u0000${kind}\u0000${key}`;
}
