import type { CachedResponse, HttpCacheStore } from '../../core/http-cache.ts';
import type { SqlDatabase } from './sql-database.ts';

/** The HTTP response cache the web and knowledge tools share, in the `http_cache` table. */
export class SqlHttpCache implements HttpCacheStore {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async get(key: string, now: number): Promise<CachedResponse | undefined> {
    const row = await this.#db.one<{
      url: string;
      status: number;
      content_type: string;
      body: Uint8Array;
      stored_at: number;
    }>('SELECT url, status, content_type, body, stored_at FROM http_cache WHERE key = ? AND expires_at > ?', [
      key,
      now,
    ]);
    if (!row) return undefined;
    return {
      url: row.url,
      status: row.status,
      contentType: row.content_type,
      // A plain view of the bytes, whichever kind the driver read them as (pg gives a Buffer).
      body: new Uint8Array(row.body.buffer, row.body.byteOffset, row.body.byteLength),
      storedAt: row.stored_at,
    };
  }

  async put(key: string, namespace: string, response: CachedResponse, expiresAt: number): Promise<void> {
    await this.#db.run(
      `INSERT INTO http_cache (key, namespace, url, status, content_type, body, stored_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET url = excluded.url, status = excluded.status,
         content_type = excluded.content_type, body = excluded.body, stored_at = excluded.stored_at,
         expires_at = excluded.expires_at`,
      [
        key,
        namespace,
        response.url,
        response.status,
        response.contentType,
        response.body,
        response.storedAt,
        expiresAt,
      ],
    );
  }

  async prune(now: number): Promise<number> {
    return this.#db.run('DELETE FROM http_cache WHERE expires_at <= ?', [now]);
  }
}
