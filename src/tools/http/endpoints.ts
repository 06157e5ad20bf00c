/**
 * Base URLs of the external APIs, each overridable with `CADRE_ENDPOINT_<API>` (tests point them at local
 * fixture servers; people point them at mirrors or self-hosted instances). Tools append their usual path.
 */
export const DEFAULT_ENDPOINTS = {
  WIKIPEDIA: 'https://en.wikipedia.org',
  WIKIDATA: 'https://www.wikidata.org',
  WIKIDATA_SPARQL: 'https://query.wikidata.org',
  DBPEDIA: 'https://dbpedia.org',
  ARXIV: 'https://export.arxiv.org',
  STACKEXCHANGE: 'https://api.stackexchange.com',
  DUCKDUCKGO: 'https://api.duckduckgo.com',
  DUCKDUCKGO_HTML: 'https://html.duckduckgo.com',
  WOLFRAM: 'https://api.wolframalpha.com',
  NASA: 'https://api.nasa.gov',
  BRAVE: 'https://api.search.brave.com',
  TAVILY: 'https://api.tavily.com',
  EXA: 'https://api.exa.ai',
  SERPAPI: 'https://serpapi.com',
  /** SearXNG is self-hosted: no default, the tool needs `CADRE_ENDPOINT_SEARXNG`. */
  SEARXNG: '',
  CONTEXT7: 'https://context7.com',
  YOUTUBE: 'https://www.youtube.com',
  /** Wikimedia Commons, the keyless default for image search. */
  COMMONS: 'https://commons.wikimedia.org',
} as const;

export type ApiName = keyof typeof DEFAULT_ENDPOINTS;

export type Env = Record<string, string | undefined>;

/** The base URL for `api`, without a trailing slash; empty when it has no default and none is set. */
export function endpoint(env: Env, api: ApiName): string {
  const configured = env[`CADRE_ENDPOINT_${api}`]?.trim();
  return (configured || DEFAULT_ENDPOINTS[api]).replace(/\/+$/, '');
}
