import { describe, expect, it } from 'vitest';
import type { CachedResponse } from '../../src/core/http-cache.ts';
import type { Store } from '../../src/store/store.ts';

const NOW = 1_750_000_000_000;

function response(text: string, storedAt = NOW): CachedResponse {
  return {
    url: `https://api.example/${text}`,
    status: 200,
    contentType: 'application/json',
    body: new TextEncoder().encode(JSON.stringify({ text })),
    storedAt,
  };
}

/** The body as text, whatever byte container the backend hands back. */
function bodyText(entry: CachedResponse | undefined): string | undefined {
  return entry ? new TextDecoder().decode(entry.body) : undefined;
}

/**
 * What every backend's `HttpCacheStore` must do, part of the store contract (`describeStoreContract`).
 * `open` gives a fresh, empty store.
 */
export function describeHttpCacheContract(open: () => Promise<Store>): void {
  describe('HTTP cache', () => {
    it('gives back a stored response, bytes and all, until it expires', async () => {
      const store = await open();
      const cache = store.httpCache;
      expect(await cache.get('k1', NOW)).toBeUndefined();
      const stored = response('tides');
      await cache.put('k1', 'wikipedia_search', stored, NOW + 60_000);
      const hit = await cache.get('k1', NOW + 1);
      expect(hit).toMatchObject({
        url: stored.url,
        status: 200,
        contentType: 'application/json',
        storedAt: NOW,
      });
      expect(bodyText(hit)).toBe('{"text":"tides"}');
      expect(await cache.get('k1', NOW + 59_999)).toBeDefined();
      expect(await cache.get('k1', NOW + 60_000)).toBeUndefined();
      expect(await cache.get('k2', NOW)).toBeUndefined();
      await store.close();
    });

    it('keeps binary bodies exact', async () => {
      const store = await open();
      const body = Uint8Array.from({ length: 256 }, (_, index) => index);
      await store.httpCache.put('bytes', 'web_fetch', { ...response('b'), body }, NOW + 1_000);
      const hit = await store.httpCache.get('bytes', NOW);
      expect([...(hit?.body ?? [])]).toEqual([...body]);
      await store.close();
    });

    it('replaces an entry stored again under the same key, with its new expiry', async () => {
      const store = await open();
      const cache = store.httpCache;
      await cache.put('k1', 'web_fetch', response('old'), NOW + 1_000);
      await cache.put('k1', 'web_fetch', response('new', NOW + 500), NOW + 5_000);
      const hit = await cache.get('k1', NOW + 2_000);
      expect(bodyText(hit)).toBe('{"text":"new"}');
      expect(hit?.storedAt).toBe(NOW + 500);
      // A refreshed entry can also expire sooner than the one it replaced.
      await cache.put('k1', 'web_fetch', response('short'), NOW + 100);
      expect(await cache.get('k1', NOW + 200)).toBeUndefined();
      await store.close();
    });

    it('prunes exactly the expired entries and says how many went', async () => {
      const store = await open();
      const cache = store.httpCache;
      await cache.put('expired-1', 'web_fetch', response('a'), NOW - 10);
      await cache.put('expired-2', 'wikipedia_search', response('b'), NOW);
      await cache.put('fresh', 'web_fetch', response('c'), NOW + 10);
      expect(await cache.prune(NOW)).toBe(2);
      expect(await cache.prune(NOW)).toBe(0);
      // Gone for good: not even a reader with an earlier clock finds them.
      expect(await cache.get('expired-1', NOW - 1_000)).toBeUndefined();
      expect(await cache.get('expired-2', NOW - 1_000)).toBeUndefined();
      expect(bodyText(await cache.get('fresh', NOW))).toBe('{"text":"c"}');
      expect(await cache.prune(NOW + 10)).toBe(1);
      expect(await cache.get('fresh', NOW)).toBeUndefined();
      await store.close();
    });
  });
}
