import type { UserRows } from '../token-users.ts';
import type { Database } from './database.ts';

/** The `users` rows in SQLite, for `TokenUserStore` (which holds the token logic every backend shares). */
export class SqliteUserRows implements UserRows {
  #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async insert(row: { id: string; name: string; tokenHash: string; createdAt: number }): Promise<boolean> {
    const inserted = this.#db
      .prepare(
        'INSERT INTO users (id, name, token_hash, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
      )
      .run(row.id, row.name, row.tokenHash, row.createdAt);
    return inserted.changes > 0;
  }

  async list(): Promise<Array<{ id: string; name: string; createdAt: number }>> {
    const rows = this.#db
      .prepare('SELECT id, name, created_at FROM users WHERE token_hash IS NOT NULL ORDER BY name')
      .all() as Array<{ id: string; name: string; created_at: number }>;
    return rows.map((row) => ({ id: row.id, name: row.name, createdAt: row.created_at }));
  }

  async remove(name: string): Promise<boolean> {
    return (
      this.#db.prepare('DELETE FROM users WHERE name = ? AND token_hash IS NOT NULL').run(name).changes > 0
    );
  }

  async hasTokens(): Promise<boolean> {
    return this.#db.prepare('SELECT 1 FROM users WHERE token_hash IS NOT NULL LIMIT 1').get() !== undefined;
  }

  async byId(id: string) {
    const row = this.#db.prepare('SELECT id, name, token_hash, created_at FROM users WHERE id = ?').get(id) as
      | { id: string; name: string; token_hash: string | null; created_at: number }
      | undefined;
    return row && { id: row.id, name: row.name, tokenHash: row.token_hash, createdAt: row.created_at };
  }
}
