import type { RememberedResult, ResultKey, ResultMemory } from '../core/result-memory.ts';
import type { Database } from './database.ts';
import type { Migration } from './migrations.ts';

/**
 * Finished sub-agent results kept per session for reuse by later questions (seed 000's cached last
 * result). One row per person, session and request; a newer result of the same request replaces it.
 * Rows go with their session.
 */
export const resultMemoryMigration: Migration = {
  id: '007-subagent-results',
  sql: `
    CREATE TABLE subagent_results (
      user_id TEXT NOT NULL,
      session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
      agent TEXT NOT NULL,
      model TEXT NOT NULL,
      input TEXT NOT NULL,
      envelope TEXT NOT NULL,
      finished_at INTEGER NOT NULL,
      PRIMARY KEY (user_id, session_id, agent, model, input)
    );
  `,
};

/** The SQLite result memory behind `ResultMemory`. */
export class SqliteResultMemory implements ResultMemory {
  #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async recall(key: ResultKey): Promise<RememberedResult | undefined> {
    const row = this.#db
      .prepare(
        'SELECT envelope, finished_at FROM subagent_results WHERE user_id = ? AND session_id = ? AND agent = ? AND model = ? AND input = ?',
      )
      .get(key.userId, key.sessionId, key.agent, key.model, key.input) as
      | { envelope: string; finished_at: number }
      | undefined;
    return row ? { envelope: JSON.parse(row.envelope), finishedAt: row.finished_at } : undefined;
  }

  async remember(key: ResultKey, result: RememberedResult): Promise<void> {
    this.#db
      .prepare(
        `INSERT INTO subagent_results (user_id, session_id, agent, model, input, envelope, finished_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT DO UPDATE SET envelope = excluded.envelope, finished_at = excluded.finished_at`,
      )
      .run(
        key.userId,
        key.sessionId,
        key.agent,
        key.model,
        key.input,
        JSON.stringify(result.envelope),
        result.finishedAt,
      );
  }
}
