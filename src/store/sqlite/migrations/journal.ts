import type { Migration } from '../../sql/migrations.ts';

/** Run journals (see journal-store.ts) and the attempts that share one. */
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
