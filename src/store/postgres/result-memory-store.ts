import type { RememberedResult, ResultKey, ResultMemory } from '../../core/result-memory.ts';
import type { Database } from './database.ts';

/** Finished sub-agent results kept per person, session and request, for reuse (`subagent_results`). */
export class PostgresResultMemory implements ResultMemory {
  #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async recall(key: ResultKey): Promise<RememberedResult | undefined> {
    const { rows } = await this.#db.query<{ envelope: string; finished_at: number }>(
      `SELECT envelope, finished_at FROM subagent_results
       WHERE user_id = $1 AND session_id = $2 AND agent = $3 AND model = $4 AND input = $5`,
      [key.userId, key.sessionId, key.agent, key.model, key.input],
    );
    const row = rows[0];
    return row ? { envelope: JSON.parse(row.envelope), finishedAt: row.finished_at } : undefined;
  }

  async remember(key: ResultKey, result: RememberedResult): Promise<void> {
    // A session removed meanwhile takes its results with it: nothing to remember then.
    await this.#db.query(
      `INSERT INTO subagent_results (user_id, session_id, agent, model, input, envelope, finished_at)
       SELECT $1, $2, $3, $4, $5, $6, $7 WHERE EXISTS (SELECT 1 FROM sessions WHERE user_id = $1 AND id = $2)
       ON CONFLICT (user_id, session_id, agent, model, input)
       DO UPDATE SET envelope = excluded.envelope, finished_at = excluded.finished_at`,
      [
        key.userId,
        key.sessionId,
        key.agent,
        key.model,
        key.input,
        JSON.stringify(result.envelope),
        result.finishedAt,
      ],
    );
  }
}
