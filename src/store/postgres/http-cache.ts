import type { CachedResponse, HttpCacheStore } from '../../core/http-cache.ts';
import type { Database } from './database.ts';

/** The HTTP response cache the web and knowledge tools share, in the `http_cache` table. */
export class PostgresHttpCache implements HttpCacheStore {
  #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async get(key: string, now: number): Promise<CachedResponse | undefined> {
    const { rows } = await this.#db.query<{
      url: string;
      status: number;
      content_type: string;
      body: Buffer;
      stored_at: number;
    }>(
      'SELECT url, status, content_type, body, stored_at FROM http_cache WHERE key = $1 AND expires_at > $2',
      [key, now],
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      url: row.url,
      status: row.status,
      contentType: row.content_type,
      body: new Uint8Array(row.body.buffer, row.body.byteOffset, row.body.byteLength),
      storedAt: row.stored_at,
    };
  }

  async put(key: string, namespace: string, response: CachedResponse, expiresAt: number): Promise<void> {
    await this.#db.query(
      `INSERT INTO http_cache (key, namespace, url, status, content_type, body, stored_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (key) DO UPDATE SET url = excluded.url, status = excluded.status,
         content_type = excluded.content_type, body = excluded.body, stored_at = excluded.stored_at,
         expires_at = excluded.expires_at`,
      [
        key,
        namespace,
        response.url,
        response.status,
        response.contentType,
        Buffer.from(response.body.buffer, response.body.byteOffset, response.body.byteLength),
        response.storedAt,
        expiresAt,
      ],
    );
  }

  async prune(now: number): Promise<number> {
    const { rowCount } = await this.#db.query('DELETE FROM http_cache WHERE expires_at <= $1', [now]);
    return rowCount ?? 0;
  }
}
