import { z } from 'zod';
import { defineTool } from '../../core/tool.ts';
import {
  apiBase,
  callApi,
  clip,
  fetchJson,
  metaOf,
  type NetworkToolDeps,
  plainText,
  withQuery,
} from '../http/tool-support.ts';
import { asUntrusted } from '../http/untrusted.ts';

const searchResponse = z.object({
  query: z.object({
    search: z.array(
      z.object({ title: z.string(), snippet: z.string().default(''), pageid: z.number().optional() }),
    ),
  }),
});

const summaryResponse = z.object({
  type: z.string().optional(),
  title: z.string(),
  description: z.string().optional(),
  extract: z.string().default(''),
  content_urls: z.object({ desktop: z.object({ page: z.string() }) }).optional(),
});

/** The article URL on the configured Wikipedia (the public one unless overridden). */
function articleUrl(base: string, title: string): string {
  return `${base}/wiki/${encodeURIComponent(title.replace(/ /g, '_'))}`;
}

/** Full-text search over English Wikipedia (MediaWiki `list=search`). */
export function wikipediaSearchTool(deps: NetworkToolDeps) {
  return defineTool({
    name: 'wikipedia_search',
    family: 'knowledge',
    description:
      'Search English Wikipedia. Returns article titles, short snippets and URLs; follow up with ' +
      'wikipedia_summary for an article.',
    input: z.object({
      query: z.string().min(1).max(300),
      limit: z.number().int().min(1).max(20).optional(),
    }),
    toModelOutput: asUntrusted('wikipedia_search'),
    async execute({ query, limit }, context) {
      const base = apiBase(deps, 'WIKIPEDIA');
      return callApi('Wikipedia', async () => {
        const url = withQuery(`${base}/w/api.php`, {
          action: 'query',
          list: 'search',
          srsearch: query,
          srlimit: limit ?? 5,
          srprop: 'snippet',
          format: 'json',
          formatversion: 2,
        });
        const { json, response } = await fetchJson(deps, 'wikipedia_search', url, { signal: context.signal });
        const hits = searchResponse.parse(json).query.search;
        return {
          query,
          results: hits.map((hit) => ({
            title: hit.title,
            snippet: clip(plainText(hit.snippet), 240),
            url: articleUrl(base, hit.title),
          })),
          meta: metaOf(response),
        };
      });
    },
  });
}

/** The lead summary of one Wikipedia article (REST `page/summary`). */
export function wikipediaSummaryTool(deps: NetworkToolDeps) {
  return defineTool({
    name: 'wikipedia_summary',
    family: 'knowledge',
    description: 'Get the introductory summary of one English Wikipedia article by its exact title.',
    input: z.object({ title: z.string().min(1).max(300) }),
    toModelOutput: asUntrusted('wikipedia_summary'),
    async execute({ title }, context) {
      const base = apiBase(deps, 'WIKIPEDIA');
      return callApi(
        'Wikipedia',
        async () => {
          const path = encodeURIComponent(title.trim().replace(/ /g, '_'));
          const { json, response } = await fetchJson(
            deps,
            'wikipedia_summary',
            `${base}/api/rest_v1/page/summary/${path}`,
            {
              signal: context.signal,
            },
          );
          const page = summaryResponse.parse(json);
          return {
            title: page.title,
            ...(page.description ? { description: page.description } : {}),
            ...(page.type === 'disambiguation'
              ? { note: 'This is a disambiguation page; pick a more specific title.' }
              : {}),
            extract: clip(page.extract, 2_000),
            url: page.content_urls?.desktop.page ?? articleUrl(base, page.title),
            meta: metaOf(response),
          };
        },
        `Wikipedia has no article titled "${title}"; use wikipedia_search to find the exact title.`,
      );
    },
  });
}
