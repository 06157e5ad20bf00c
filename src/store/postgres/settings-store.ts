import type { SettingsStore } from '../store.ts';
import type { Database } from './database.ts';

/** Settings as JSON values in the `settings` table, by scope and key. */
export class PostgresSettingsStore implements SettingsStore {
  #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async get(scope: string, key: string): Promise<unknown> {
    const { rows } = await this.#db.query<{ value: string }>(
      'SELECT value FROM settings WHERE scope = $1 AND key = $2',
      [scope, key],
    );
    return rows[0] ? JSON.parse(rows[0].value) : undefined;
  }

  async list(scope: string): Promise<Record<string, unknown>> {
    const { rows } = await this.#db.query<{ key: string; value: string }>(
      'SELECT key, value FROM settings WHERE scope = $1 ORDER BY key',
      [scope],
    );
    return Object.fromEntries(rows.map((row) => [row.key, JSON.parse(row.value)]));
  }

  async put(scope: string, key: string, value: unknown): Promise<void> {
    await this.#db.query(
      `INSERT INTO settings (scope, key, value) VALUES ($1, $2, $3)
       ON CONFLICT (scope, key) DO UPDATE SET value = excluded.value`,
      [scope, key, JSON.stringify(value)],
    );
  }

  async delete(scope: string, key: string): Promise<boolean> {
    const { rowCount } = await this.#db.query('DELETE FROM settings WHERE scope = $1 AND key = $2', [
      scope,
      key,
    ]);
    return (rowCount ?? 0) > 0;
  }
}
