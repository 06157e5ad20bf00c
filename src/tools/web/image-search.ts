import { z } from 'zod';
import { defineTool } from '../../core/tool.ts';
import type { HttpRequest, HttpResponse } from '../http/http-client.ts';
import {
  apiBase,
  callApi,
  fetchJson,
  metaOf,
  type NetworkToolDeps,
  plainText,
  ToolCallError,
  withQuery,
} from '../http/tool-support.ts';
import { asUntrusted } from '../http/untrusted.ts';
import { searchProviderName } from './search-providers.ts';

export interface ImageHit {
  title: string;
  /** The page the image is on (what to cite). */
  url: string;
  image: string;
  thumbnail?: string;
  source?: string;
  license?: string;
}

interface ImageCall {
  deps: NetworkToolDeps;
  query: string;
  max: number;
  signal: AbortSignal;
}

/** Image APIs answer JSON only; anything else is an error page. */
const JSON_ONLY = ['application/json'];

/** One image API's JSON answer, cached under image_search's TTL. */
const fetchImageJson = (call: ImageCall, url: string, init: Partial<HttpRequest> = {}) =>
  fetchJson<any>(call.deps, 'image_search', url, { accept: JSON_ONLY, signal: call.signal, ...init });

const isHttp = (value: unknown): value is string => typeof value === 'string' && /^https?:\/\//.test(value);

/** Wikimedia Commons file search: keyless, with licences, the default when the search provider has no image API. */
async function commons(call: ImageCall) {
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

async function brave(call: ImageCall) {
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

async function serpapi(call: ImageCall) {
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

async function searxng(call: ImageCall) {
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

/**
 * Image search: Brave, SerpAPI or SearXNG when that is the configured search provider and it is set
 * up; otherwise Wikimedia Commons, which needs no key and reports each image's licence.
 */
export function imageSearchTool(deps: NetworkToolDeps) {
  return defineTool({
    name: 'image_search',
    family: 'web',
    description:
      'Search for images. Returns image URLs, thumbnails, the page each image is on (cite that) and, ' +
      'from Wikimedia Commons, the licence.',
    input: z.object({
      query: z.string().min(1).max(300),
      max_results: z.number().int().min(1).max(20).optional(),
    }),
    toModelOutput: asUntrusted('image_search'),
    async execute({ query, max_results }, context) {
      const call: ImageCall = { deps, query, max: max_results ?? 6, signal: context.signal };
      const provider = searchProviderName(deps.env);
      const run =
        provider === 'brave' && deps.env.BRAVE_API_KEY
          ? brave
          : provider === 'serpapi' && deps.env.SERPAPI_API_KEY
            ? serpapi
            : provider === 'searxng' && deps.env.CADRE_ENDPOINT_SEARXNG
              ? searxng
              : commons;
      return callApi('Image search', async () => {
        const { provider: used, hits, responses } = await run(call);
        return {
          query,
          provider: used,
          results: hits.slice(0, call.max),
          meta: metaOf(...(responses as HttpResponse[])),
        };
      });
    },
  });
}
