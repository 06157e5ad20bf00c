import type { Migration } from '../../sql/migrations.ts';

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
