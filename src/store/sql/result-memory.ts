import type { RememberedResult, ResultKey, ResultMemory } from '../../core/result-memory.ts';
import type { SqlDatabase } from './sql-database.ts';

/** Finished sub-agent results kept per person, session and request, for reuse (`subagent_results`). */
export class SqlResultMemory implements ResultMemory {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async recall(key: ResultKey): Promise<RememberedResult | undefined> {
    const row = await this.#db.one<{ envelope: string; finished_at: number }>(
      `SELECT envelope, finished_at FROM subagent_results
       WHERE user_id = ? AND session_id = ? AND agent = ? AND model = ? AND input = ?`,
      [key.userId, key.sessionId, key.agent, key.model, key.input],
    );
    return row ? { envelope: JSON.parse(row.envelope), finishedAt: row.finished_at } : undefined;
  }

  async remember(key: ResultKey, result: RememberedResult): Promise<void> {
    // A session removed meanwhile takes its results with it: nothing to remember then.
    await this.#db.run(
      `INSERT INTO subagent_results (user_id, session_id, agent, model, input, envelope, finished_at)
       SELECT ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM sessions WHERE user_id = ? AND id = ?)
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
        key.userId,
        key.sessionId,
      ],
    );
  }
}
