import type { CachedResponse, HttpCacheStore } from '../core/http-cache.ts';
import type { Database } from './database.ts';
import type { Migration } from './migrations.ts';

export type { CachedResponse, HttpCacheStore };

/**
 * The HTTP response cache the web and knowledge tools share. Keys are hashes of the request (tool,
 * method, URL, body), so API keys in URLs are never stored in the clear; only successful responses are
 * kept, each until its tool's TTL runs out.
 */
export const httpCacheMigration: Migration = {
  id: '003-http-cache',
  sql: `
    CREATE TABLE http_cache (
      key TEXT PRIMARY KEY,
      namespace TEXT NOT NULL,
      url TEXT NOT NULL,
      status INTEGER NOT NULL,
      content_type TEXT NOT NULL,
      body BLOB NOT NULL,
      stored_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL
    );
    CREATE INDEX http_cache_expiry ON http_cache(expires_at);
  `,
};

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
