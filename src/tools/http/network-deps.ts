import type { HttpCacheStore } from '../../core/http-cache.ts';
import type { Env } from './endpoints.ts';
import { HttpClient } from './http-client.ts';
import { type HostRate, RateLimiter } from './rate-limiter.ts';
import type { NetworkToolDeps } from './tool-support.ts';
import { parseAllowHosts } from './url-guard.ts';

/**
 * Published or requested request rates of the public APIs. arXiv asks for one request every three
 * seconds; the Wikidata and DBpedia query services throttle heavy users; the rest get a polite default.
 */
export const HOST_RATES: Record<string, HostRate> = {
  'export.arxiv.org': { perSecond: 1 / 3, burst: 1 },
  'query.wikidata.org': { perSecond: 1, burst: 2 },
  'dbpedia.org': { perSecond: 1, burst: 2 },
  'api.stackexchange.com': { perSecond: 2, burst: 4 },
  'html.duckduckgo.com': { perSecond: 1, burst: 2 },
  'api.wolframalpha.com': { perSecond: 1, burst: 2 },
  'api.nasa.gov': { perSecond: 1, burst: 2 },
  'www.youtube.com': { perSecond: 1, burst: 2 },
};

export const DEFAULT_HOST_RATE: HostRate = { perSecond: 5, burst: 10 };

/** Seconds a tool's responses stay cached unless settings `cacheTtl` says otherwise; 0 disables. */
export const DEFAULT_CACHE_TTL: Record<string, number> = {
  web_search: 3_600,
  web_fetch: 900,
  image_search: 3_600,
  youtube_transcript: 86_400,
  wikipedia_search: 3_600,
  wikipedia_summary: 86_400,
  wikidata_search: 86_400,
  wikidata_sparql: 3_600,
  dbpedia_sparql: 3_600,
  arxiv_search: 3_600,
  stackexchange_search: 3_600,
  wolfram_query: 86_400,
  nasa_apod: 3_600,
  duckduckgo_instant: 3_600,
  docs_lookup: 86_400,
};

/** Builds the shared client and settings the network tools need, from Cadre's tool dependencies. */
export function createNetworkDeps(options: {
  env: Env;
  cache?: HttpCacheStore | undefined;
  settings?: Record<string, unknown> | undefined;
}): NetworkToolDeps {
  const http = new HttpClient({
    guard: { allowHosts: parseAllowHosts(options.env.CADRE_FETCH_ALLOW) },
    rateLimiter: new RateLimiter({ defaultRate: DEFAULT_HOST_RATE, hosts: HOST_RATES }),
    ...(options.cache ? { cache: options.cache } : {}),
  });
  const configured = (options.settings?.cacheTtl ?? {}) as Record<string, unknown>;
  return {
    http,
    env: options.env,
    cacheTtl: (tool) => {
      const value = configured[tool];
      return typeof value === 'number' && value >= 0 ? value : (DEFAULT_CACHE_TTL[tool] ?? 3_600);
    },
  };
}
