import type { ApiName } from '../http/endpoints.ts';
import { bodyText, type HttpResponse } from '../http/http-client.ts';
import { apiBase, fetchJson, plainText, ToolCallError, withQuery } from '../http/tool-support.ts';
import { braveImages, type ImageHit, searxngImages, serpapiImages } from './image-providers.ts';
import type { SearchCall } from './search-call.ts';

export type { SearchCall };

/**
 * The web search back-ends `CADRE_SEARCH_PROVIDER` chooses between. Each is a thin client of its API
 * returning the same hit shape; DuckDuckGo's HTML endpoint is the keyless default.
 */
export interface SearchHit {
  title: string;
  url: string;
  snippet: string;
}

export interface SearchProvider {
  name: string;
  api: ApiName;
  /** Environment variable holding the key, when the provider needs one. */
  keyEnv?: string;
  search(call: SearchCall): Promise<{ hits: SearchHit[]; responses: HttpResponse[] }>;
  /** Its image search, when it has one (image_search uses it; Wikimedia Commons otherwise). */
  images?(call: SearchCall): Promise<{ provider: string; hits: ImageHit[]; responses: HttpResponse[] }>;
}

/** Search APIs answer JSON only; anything else is an error page. */
const JSON_ONLY = ['application/json'];

function key(call: SearchCall, env: string): string {
  const value = call.deps.env[env];
  if (!value) throw new ToolCallError(`This search provider needs ${env}.`);
  return value;
}

const hit = (title: unknown, url: unknown, snippet: unknown): SearchHit | undefined =>
  typeof url === 'string' && /^https?:\/\//.test(url)
    ? { title: plainText(String(title ?? url)), url, snippet: plainText(String(snippet ?? '')).slice(0, 400) }
    : undefined;

const defined = <T>(items: Array<T | undefined>): T[] =>
  items.filter((item): item is T => item !== undefined);

/** Parses DuckDuckGo's HTML results page (html.duckduckgo.com/html). linkedom loads on first use. */
export async function parseDuckDuckGoHtml(html: string): Promise<SearchHit[]> {
  const { parseHTML } = await import('linkedom');
  const { document } = parseHTML(html);
  const hits: SearchHit[] = [];
  for (const result of [...document.querySelectorAll('.result')]) {
    if (result.classList.contains('result--ad')) continue;
    const anchor = result.querySelector('a.result__a');
    const href = anchor?.getAttribute('href');
    if (!anchor || !href) continue;
    const url = resultTarget(href);
    const found = hit(anchor.textContent, url, result.querySelector('.result__snippet')?.textContent);
    if (found) hits.push(found);
  }
  return hits;
}

/** DuckDuckGo links go through `/l/?uddg=<target>`; the target is what gets cited. */
function resultTarget(href: string): string | undefined {
  try {
    const url = new URL(href, 'https://duckduckgo.com');
    const target = url.pathname === '/l/' ? url.searchParams.get('uddg') : url.toString();
    return target ?? undefined;
  } catch {
    return undefined;
  }
}

export const SEARCH_PROVIDERS: Record<string, SearchProvider> = {
  duckduckgo: {
    name: 'duckduckgo',
    api: 'DUCKDUCKGO_HTML',
    async search(call) {
      const base = apiBase(call.deps, 'DUCKDUCKGO_HTML');
      const response = await call.deps.http.request({
        url: withQuery(`${base}/html/`, { q: call.query, kl: 'wt-wt' }),
        trust: 'endpoint',
        accept: ['text/html'],
        signal: call.signal,
        cache: { namespace: call.tool, ttlSeconds: call.deps.cacheTtl(call.tool) },
      });
      const html = bodyText(response);
      const hits = await parseDuckDuckGoHtml(html);
      if (hits.length === 0 && /anomaly|captcha|challenge/i.test(html)) {
        throw new ToolCallError(
          'DuckDuckGo answered with a bot check instead of results; try again later or set ' +
            'CADRE_SEARCH_PROVIDER to brave, tavily, exa, serpapi or searxng.',
        );
      }
      return { hits: hits.slice(0, call.max), responses: [response] };
    },
  },
  brave: {
    name: 'brave',
    api: 'BRAVE',
    keyEnv: 'BRAVE_API_KEY',
    images: braveImages,
    async search(call) {
      const { json, response } = await fetchJson<any>(
        call.deps,
        call.tool,
        withQuery(`${apiBase(call.deps, 'BRAVE')}/res/v1/web/search`, {
          q: call.query,
          count: call.max,
        }),
        {
          accept: JSON_ONLY,
          signal: call.signal,
          headers: { 'x-subscription-token': key(call, 'BRAVE_API_KEY') },
        },
      );
      const results: any[] = json?.web?.results ?? [];
      return {
        hits: defined(results.map((item) => hit(item.title, item.url, item.description))),
        responses: [response],
      };
    },
  },
  tavily: {
    name: 'tavily',
    api: 'TAVILY',
    keyEnv: 'TAVILY_API_KEY',
    async search(call) {
      const { json, response } = await fetchJson<any>(
        call.deps,
        call.tool,
        `${apiBase(call.deps, 'TAVILY')}/search`,
        {
          accept: JSON_ONLY,
          signal: call.signal,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${key(call, 'TAVILY_API_KEY')}`,
          },
          body: JSON.stringify({ query: call.query, max_results: call.max, search_depth: 'basic' }),
        },
      );
      const results: any[] = json?.results ?? [];
      return {
        hits: defined(results.map((item) => hit(item.title, item.url, item.content))),
        responses: [response],
      };
    },
  },
  exa: {
    name: 'exa',
    api: 'EXA',
    keyEnv: 'EXA_API_KEY',
    async search(call) {
      const { json, response } = await fetchJson<any>(
        call.deps,
        call.tool,
        `${apiBase(call.deps, 'EXA')}/search`,
        {
          accept: JSON_ONLY,
          signal: call.signal,
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key(call, 'EXA_API_KEY') },
          body: JSON.stringify({
            query: call.query,
            numResults: call.max,
            contents: { text: { maxCharacters: 400 } },
          }),
        },
      );
      const results: any[] = json?.results ?? [];
      return {
        hits: defined(
          results.map((item) => hit(item.title, item.url, item.text ?? item.highlights?.[0] ?? '')),
        ),
        responses: [response],
      };
    },
  },
  serpapi: {
    name: 'serpapi',
    api: 'SERPAPI',
    keyEnv: 'SERPAPI_API_KEY',
    images: serpapiImages,
    async search(call) {
      const { json, response } = await fetchJson<any>(
        call.deps,
        call.tool,
        withQuery(`${apiBase(call.deps, 'SERPAPI')}/search.json`, {
          engine: 'google',
          q: call.query,
          num: call.max,
          api_key: key(call, 'SERPAPI_API_KEY'),
        }),
        {
          accept: JSON_ONLY,
          signal: call.signal,
        },
      );
      if (typeof json?.error === 'string' && !/hasn't returned any results/i.test(json.error)) {
        throw new ToolCallError(`SerpAPI: ${json.error}`);
      }
      const results: any[] = json?.organic_results ?? [];
      return {
        hits: defined(results.map((item) => hit(item.title, item.link, item.snippet))),
        responses: [response],
      };
    },
  },
  searxng: {
    name: 'searxng',
    api: 'SEARXNG',
    images: searxngImages,
    async search(call) {
      const base = apiBase(call.deps, 'SEARXNG');
      if (!base) throw new ToolCallError('SearXNG needs CADRE_ENDPOINT_SEARXNG (your instance URL).');
      const { json, response } = await fetchJson<any>(
        call.deps,
        call.tool,
        withQuery(`${base}/search`, { q: call.query, format: 'json' }),
        {
          accept: JSON_ONLY,
          signal: call.signal,
        },
      );
      const results: any[] = json?.results ?? [];
      return {
        hits: defined(results.map((item) => hit(item.title, item.url, item.content))).slice(0, call.max),
        responses: [response],
      };
    },
  },
};

/** The provider `CADRE_SEARCH_PROVIDER` names (DuckDuckGo when unset). */
export function searchProviderName(env: Record<string, string | undefined>): string {
  return (env.CADRE_SEARCH_PROVIDER ?? 'duckduckgo').trim().toLowerCase() || 'duckduckgo';
}

/** Why the configured provider cannot be used now, with what would fix it; undefined when it can. */
export function providerUnavailable(env: Record<string, string | undefined>) {
  const name = searchProviderName(env);
  const provider = SEARCH_PROVIDERS[name];
  if (!provider) {
    return {
      reason: `CADRE_SEARCH_PROVIDER="${name}" is not a known provider`,
      enableWith: `CADRE_SEARCH_PROVIDER=${Object.keys(SEARCH_PROVIDERS).join('|')}`,
    };
  }
  if (provider.keyEnv && !env[provider.keyEnv]) {
    return { reason: `the ${name} search provider needs an API key`, enableWith: provider.keyEnv };
  }
  if (name === 'searxng' && !env.CADRE_ENDPOINT_SEARXNG) {
    return { reason: 'the searxng provider needs your instance URL', enableWith: 'CADRE_ENDPOINT_SEARXNG' };
  }
  return undefined;
}
