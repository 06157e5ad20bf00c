import type { UserRows } from '../token-users.ts';
import type { Database } from './database.ts';

/** The `users` rows in PostgreSQL, for `TokenUserStore` (which holds the token logic every backend shares). */
export class PostgresUserRows implements UserRows {
  #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async insert(row: { id: string; name: string; tokenHash: string; createdAt: number }): Promise<boolean> {
    const { rowCount } = await this.#db.query(
      'INSERT INTO users (id, name, token_hash, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING',
      [row.id, row.name, row.tokenHash, row.createdAt],
    );
    return (rowCount ?? 0) > 0;
  }

  async list(): Promise<Array<{ id: string; name: string; createdAt: number }>> {
    const { rows } = await this.#db.query<{ id: string; name: string; created_at: number }>(
      'SELECT id, name, created_at FROM users WHERE token_hash IS NOT NULL ORDER BY name',
    );
    return rows.map((row) => ({ id: row.id, name: row.name, createdAt: row.created_at }));
  }

  async remove(name: string): Promise<boolean> {
    const { rowCount } = await this.#db.query(
      'DELETE FROM users WHERE name = $1 AND token_hash IS NOT NULL',
      [name],
    );
    return (rowCount ?? 0) > 0;
  }

  async hasTokens(): Promise<boolean> {
    const { rowCount } = await this.#db.query('SELECT 1 FROM users WHERE token_hash IS NOT NULL LIMIT 1');
    return (rowCount ?? 0) > 0;
  }

  async byId(id: string) {
    const { rows } = await this.#db.query<{
      id: string;
      name: string;
      token_hash: string | null;
      created_at: number;
    }>('SELECT id, name, token_hash, created_at FROM users WHERE id = $1', [id]);
    const row = rows[0];
    return row && { id: row.id, name: row.name, tokenHash: row.token_hash, createdAt: row.created_at };
  }
}
