import type { SettingsStore } from '../store.ts';
import type { Database } from './database.ts';

/** Settings as JSON values in the `settings` table, by scope and key. */
export class SqliteSettingsStore implements SettingsStore {
  #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async get(scope: string, key: string): Promise<unknown> {
    const row = this.#db.prepare('SELECT value FROM settings WHERE scope = ? AND key = ?').get(scope, key) as
      | { value: string }
      | undefined;
    return row ? JSON.parse(row.value) : undefined;
  }

  async list(scope: string): Promise<Record<string, unknown>> {
    const rows = this.#db
      .prepare('SELECT key, value FROM settings WHERE scope = ? ORDER BY key')
      .all(scope) as Array<{
      key: string;
      value: string;
    }>;
    return Object.fromEntries(rows.map((row) => [row.key, JSON.parse(row.value)]));
  }

  async put(scope: string, key: string, value: unknown): Promise<void> {
    this.#db
      .prepare(
        'INSERT INTO settings (scope, key, value) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET value = excluded.value',
      )
      .run(scope, key, JSON.stringify(value));
  }

  async delete(scope: string, key: string): Promise<boolean> {
    return this.#db.prepare('DELETE FROM settings WHERE scope = ? AND key = ?').run(scope, key).changes > 0;
  }
}
