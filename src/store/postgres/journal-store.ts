import type { JournalKind, TreeJournal } from '../../core/journal.ts';
import { entryBody } from '../journal-bodies.ts';
import type { FoundJournal, JournalStore, ResumeSpec } from '../journal-store.ts';
import { inflatePayloads } from '../payloads.ts';
import type { Database } from './database.ts';
import type { EventWriter } from './event-writer.ts';

/**
 * The PostgreSQL journal. Entries go through the store's event writer, in order with the runs' events:
 * one put `now` resolves once committed; one put `soon` is committed by the next `runs.secure()`, which
 * the runtime awaits before each model request.
 */
export class PostgresJournalStore implements JournalStore {
  #db: Database;
  #writer: EventWriter;

  constructor(db: Database, writer: EventWriter) {
    this.#db = db;
    this.#writer = writer;
  }

  create(journalId: string): TreeJournal & { entries(): number } {
    return this.#handle(journalId, new Map());
  }

  async open(journalId: string): Promise<TreeJournal & { entries(): number }> {
    await this.#writer.flush();
    const { rows } = await this.#db.query<{
      run_key: string;
      kind: string;
      key: string;
      body: string;
      payload: string | null;
    }>(
      `SELECT j.run_key, j.kind, j.key, j.body, p.body AS payload FROM journal j
       LEFT JOIN payloads p ON p.hash = j.payload_hash WHERE j.journal_id = $1 ORDER BY j.position`,
      [journalId],
    );
    const loaded = new Map<string, unknown>();
    for (const row of rows)
      loaded.set(
        entryKey(row.run_key, row.kind, row.key),
        inflatePayloads(JSON.parse(row.body), row.payload),
      );
    return this.#handle(journalId, loaded);
  }

  /** A journal over the entries an earlier attempt left (`loaded`); what is put is only counted. */
  #handle(journalId: string, loaded: Map<string, unknown>): TreeJournal & { entries(): number } {
    let added = 0;
    return {
      get: (runKey: string, kind: JournalKind, key: string) =>
        loaded.size ? loaded.get(entryKey(runKey, kind, key)) : undefined,
      put: (runKey: string, kind: JournalKind, key: string, body: unknown, when: 'now' | 'soon' = 'now') => {
        const { text, output } = entryBody(kind, body);
        if (!loaded.has(entryKey(runKey, kind, key))) added++;
        const committed = this.#writer.enqueueJournal({
          journalId,
          runKey,
          kind,
          key,
          body: text,
          ...(output === undefined ? {} : { output }),
        });
        if (when === 'now') return committed;
        // Secured by the next `secure()`; a failure is the writer's to report, not an unhandled rejection.
        committed.catch(() => {});
      },
      entries: () => loaded.size + added,
    };
  }

  begin(journalId: string, rootRunId: string, userId: string, spec: ResumeSpec): Promise<void> {
    return this.#writer.enqueueAttempt({
      journalId,
      rootRunId,
      userId,
      spec: JSON.stringify(spec),
      startedAt: Date.now(),
    });
  }

  async find(userId: string, rootRunId: string): Promise<FoundJournal | undefined> {
    await this.#writer.flush();
    const { rows: found } = await this.#db.query<{ journal_id: string; user_id: string }>(
      'SELECT journal_id, user_id FROM journal_attempts WHERE root_run_id = $1',
      [rootRunId],
    );
    const row = found[0];
    if (!row || row.user_id !== userId) return undefined;
    const { rows: attempts } = await this.#db.query<{ root_run_id: string; spec: string }>(
      'SELECT root_run_id, spec FROM journal_attempts WHERE journal_id = $1 ORDER BY started_at, position',
      [row.journal_id],
    );
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
