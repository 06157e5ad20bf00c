import type { CachedResponse, HttpCacheStore } from '../../core/http-cache.ts';
import type { Database } from './database.ts';

/**
 * The SQLite-backed cache (table from `003-http-cache`). node:sqlite is synchronous: each method does its
 * work at once and hands back a settled promise.
 */
export class SqliteHttpCache implements HttpCacheStore {
  #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async get(key: string, now: number): Promise<CachedResponse | undefined> {
    const row = this.#db
      .prepare(
        'SELECT url, status, content_type, body, stored_at FROM http_cache WHERE key = ? AND expires_at > ?',
      )
      .get(key, now) as
      | { url: string; status: number; content_type: string; body: Uint8Array; stored_at: number }
      | undefined;
    if (!row) return undefined;
    return {
      url: row.url,
      status: row.status,
      contentType: row.content_type,
      body: row.body,
      storedAt: row.stored_at,
    };
  }

  async put(key: string, namespace: string, response: CachedResponse, expiresAt: number): Promise<void> {
    this.#db
      .prepare(
        `INSERT INTO http_cache (key, namespace, url, status, content_type, body, stored_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(key) DO UPDATE SET url = excluded.url, status = excluded.status,
           content_type = excluded.content_type, body = excluded.body, stored_at = excluded.stored_at,
           expires_at = excluded.expires_at`,
      )
      .run(
        key,
        namespace,
        response.url,
        response.status,
        response.contentType,
        response.body,
        response.storedAt,
        expiresAt,
      );
  }

  async prune(now: number): Promise<number> {
    const result = this.#db.prepare('DELETE FROM http_cache WHERE expires_at <= ?').run(now);
    return Number(result.changes);
  }
}
