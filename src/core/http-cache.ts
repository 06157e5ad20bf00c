/**
 * The response cache the web and knowledge tools share, as they see it: the store implements it (SQLite
 * table `http_cache` now), and tools get it handed in, never the database.
 */
export interface CachedResponse {
  /** Final URL after redirects, credentials redacted. */
  url: string;
  status: number;
  contentType: string;
  body: Uint8Array;
  storedAt: number;
}

/** Successful responses by request key, each until it expires. */
export interface HttpCacheStore {
  get(key: string, now: number): CachedResponse | undefined;
  put(key: string, namespace: string, response: CachedResponse, expiresAt: number): void;
  /** Removes expired entries; returns how many went. */
  prune(now: number): number;
}
