import type { HttpRequest } from '../http/http-client.ts';
import { apiBase, fetchJson, plainText, ToolCallError, withQuery } from '../http/tool-support.ts';
import type { SearchCall } from './search-call.ts';

/**
 * Image search clients. Brave, SerpAPI and SearXNG are the image side of those entries in the search
 * provider table (search-providers.ts); Wikimedia Commons is the keyless fallback.
 */

/** One image found: the image, its thumbnail and the page it is on. */
export interface ImageHit {
  title: string;
  /** The page the image is on (what to cite). */
  url: string;
  image: string;
  thumbnail?: string;
  source?: string;
  license?: string;
}

/** Image APIs answer JSON only; anything else is an error page. */
const JSON_ONLY = ['application/json'];

/** One image API's JSON answer, cached under the calling tool's TTL. */
const fetchImageJson = (call: SearchCall, url: string, init: Partial<HttpRequest> = {}) =>
  fetchJson<any>(call.deps, call.tool, url, { accept: JSON_ONLY, signal: call.signal, ...init });

const isHttp = (value: unknown): value is string => typeof value === 'string' && /^https?:\/\//.test(value);

/** Wikimedia Commons file search: keyless, with licences, the default when the search provider has no image API. */
export async function commonsImages(call: SearchCall) {
  const base = apiBase(call.deps, 'COMMONS');
  const { json: body, response } = await fetchImageJson(
    call,
    withQuery(`${base}/w/api.php`, {
      action: 'query',
      generator: 'search',
      gsrsearch: `filetype:bitmap ${call.query}`,
      gsrnamespace: 6,
      gsrlimit: call.max,
      prop: 'imageinfo',
      iiprop: 'url|mime|extmetadata',
      iiurlwidth: 480,
      format: 'json',
      formatversion: 2,
    }),
  );
  const pages: any[] = body?.query?.pages ?? [];
  const hits = pages
    .sort((a, b) => (a.index ?? 0) - (b.index ?? 0))
    .flatMap((page): ImageHit[] => {
      const info = page.imageinfo?.[0];
      if (!info || !isHttp(info.url)) return [];
      const meta = info.extmetadata ?? {};
      const license = meta.LicenseShortName?.value;
      return [
        {
          title: plainText(meta.ObjectName?.value ?? String(page.title ?? '').replace(/^File:/, '')),
          url: isHttp(info.descriptionurl) ? info.descriptionurl : info.url,
          image: info.url,
          ...(isHttp(info.thumburl) ? { thumbnail: info.thumburl } : {}),
          source: 'Wikimedia Commons',
          ...(license ? { license: plainText(license) } : {}),
        },
      ];
    });
  return { provider: 'wikimedia-commons', hits, responses: [response] };
}

/** Brave's image search (needs BRAVE_API_KEY). */
export async function braveImages(call: SearchCall) {
  const key = call.deps.env.BRAVE_API_KEY;
  if (!key) throw new ToolCallError('Brave image search needs BRAVE_API_KEY.');
  const { json: body, response } = await fetchImageJson(
    call,
    withQuery(`${apiBase(call.deps, 'BRAVE')}/res/v1/images/search`, { q: call.query, count: call.max }),
    { headers: { 'x-subscription-token': key } },
  );
  const results: any[] = body?.results ?? [];
  const hits = results.flatMap((item): ImageHit[] =>
    isHttp(item.properties?.url) && isHttp(item.url)
      ? [
          {
            title: plainText(item.title ?? ''),
            url: item.url,
            image: item.properties.url,
            ...(isHttp(item.thumbnail?.src) ? { thumbnail: item.thumbnail.src } : {}),
            ...(item.source ? { source: String(item.source) } : {}),
          },
        ]
      : [],
  );
  return { provider: 'brave', hits, responses: [response] };
}

/** Google Images through SerpAPI (needs SERPAPI_API_KEY). */
export async function serpapiImages(call: SearchCall) {
  const key = call.deps.env.SERPAPI_API_KEY;
  if (!key) throw new ToolCallError('SerpAPI image search needs SERPAPI_API_KEY.');
  const { json: body, response } = await fetchImageJson(
    call,
    withQuery(`${apiBase(call.deps, 'SERPAPI')}/search.json`, {
      engine: 'google_images',
      q: call.query,
      api_key: key,
    }),
  );
  const results: any[] = body?.images_results ?? [];
  const hits = results.flatMap((item): ImageHit[] =>
    isHttp(item.original) && isHttp(item.link)
      ? [
          {
            title: plainText(item.title ?? ''),
            url: item.link,
            image: item.original,
            ...(isHttp(item.thumbnail) ? { thumbnail: item.thumbnail } : {}),
            ...(item.source ? { source: String(item.source) } : {}),
          },
        ]
      : [],
  );
  return { provider: 'serpapi', hits, responses: [response] };
}

/** A SearXNG instance's image category. */
export async function searxngImages(call: SearchCall) {
  const base = apiBase(call.deps, 'SEARXNG');
  const { json: body, response } = await fetchImageJson(
    call,
    withQuery(`${base}/search`, { q: call.query, format: 'json', categories: 'images' }),
  );
  const results: any[] = body?.results ?? [];
  const hits = results.flatMap((item): ImageHit[] =>
    isHttp(item.img_src) && isHttp(item.url)
      ? [
          {
            title: plainText(item.title ?? ''),
            url: item.url,
            image: item.img_src,
            ...(isHttp(item.thumbnail_src) ? { thumbnail: item.thumbnail_src } : {}),
            ...(item.engine ? { source: String(item.engine) } : {}),
          },
        ]
      : [],
  );
  return { provider: 'searxng', hits, responses: [response] };
}
