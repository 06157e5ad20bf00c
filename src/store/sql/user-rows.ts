import type { UserRows } from '../token-users.ts';
import type { SqlDatabase } from './sql-database.ts';

/** The `users` rows, for `TokenUserStore` (which holds the token logic). */
export class SqlUserRows implements UserRows {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async insert(row: { id: string; name: string; tokenHash: string; createdAt: number }): Promise<boolean> {
    const inserted = await this.#db.run(
      'INSERT INTO users (id, name, token_hash, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
      [row.id, row.name, row.tokenHash, row.createdAt],
    );
    return inserted > 0;
  }

  async list(): Promise<Array<{ id: string; name: string; createdAt: number }>> {
    const rows = await this.#db.all<{ id: string; name: string; created_at: number }>(
      'SELECT id, name, created_at FROM users WHERE token_hash IS NOT NULL ORDER BY name',
    );
    return rows.map((row) => ({ id: row.id, name: row.name, createdAt: row.created_at }));
  }

  async remove(name: string): Promise<boolean> {
    return (await this.#db.run('DELETE FROM users WHERE name = ? AND token_hash IS NOT NULL', [name])) > 0;
  }

  async hasTokens(): Promise<boolean> {
    return (await this.#db.one('SELECT 1 FROM users WHERE token_hash IS NOT NULL LIMIT 1')) !== undefined;
  }

  async byId(id: string) {
    const row = await this.#db.one<{
      id: string;
      name: string;
      token_hash: string | null;
      created_at: number;
    }>('SELECT id, name, token_hash, created_at FROM users WHERE id = ?', [id]);
    return row && { id: row.id, name: row.name, tokenHash: row.token_hash, createdAt: row.created_at };
  }
}
