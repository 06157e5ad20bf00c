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

/**
 * Successful responses by request key, each until it expires. Async like every store interface, so any
 * backend can implement it (the embedded SQLite one answers at once, a server database over the network).
 */
export interface HttpCacheStore {
  /** The entry for `key` when it has not expired by `now` (ms since the epoch). */
  get(key: string, now: number): Promise<CachedResponse | undefined>;
  /** Stores or replaces the entry for `key` until `expiresAt` (ms since the epoch). */
  put(key: string, namespace: string, response: CachedResponse, expiresAt: number): Promise<void>;
  /** Removes expired entries; returns how many went. */
  prune(now: number): Promise<number>;
}
