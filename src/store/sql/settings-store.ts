import type { SettingsStore } from '../store.ts';
import type { SqlDatabase } from './sql-database.ts';

/** Settings as JSON values in the `settings` table, by scope and key. */
export class SqlSettingsStore implements SettingsStore {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async get(scope: string, key: string): Promise<unknown> {
    const row = await this.#db.one<{ value: string }>(
      'SELECT value FROM settings WHERE scope = ? AND key = ?',
      [scope, key],
    );
    return row ? JSON.parse(row.value) : undefined;
  }

  async list(scope: string): Promise<Record<string, unknown>> {
    const rows = await this.#db.all<{ key: string; value: string }>(
      'SELECT key, value FROM settings WHERE scope = ? ORDER BY key',
      [scope],
    );
    return Object.fromEntries(rows.map((row) => [row.key, JSON.parse(row.value)]));
  }

  async put(scope: string, key: string, value: unknown): Promise<void> {
    await this.#db.run(
      `INSERT INTO settings (scope, key, value) VALUES (?, ?, ?)
       ON CONFLICT (scope, key) DO UPDATE SET value = excluded.value`,
      [scope, key, JSON.stringify(value)],
    );
  }

  async delete(scope: string, key: string): Promise<boolean> {
    return (await this.#db.run('DELETE FROM settings WHERE scope = ? AND key = ?', [scope, key])) > 0;
  }
}
