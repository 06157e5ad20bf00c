import type { RememberedResult, ResultKey, ResultMemory } from '../../core/result-memory.ts';
import type { Database } from './database.ts';

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
