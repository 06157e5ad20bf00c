import { z } from 'zod';
import { defineTool } from '../../core/tool.ts';
import {
  apiBase,
  callApi,
  decodeEntities,
  fetchJson,
  metaOf,
  type NetworkToolDeps,
  ToolCallError,
  withQuery,
} from '../http/tool-support.ts';
import { asUntrusted } from '../http/untrusted.ts';

const searchResponse = z.object({
  items: z.array(
    z.object({
      title: z.string(),
      link: z.string(),
      score: z.number().default(0),
      answer_count: z.number().default(0),
      is_answered: z.boolean().default(false),
      accepted_answer_id: z.number().optional(),
      tags: z.array(z.string()).default([]),
      creation_date: z.number().optional(),
    }),
  ),
  error_message: z.string().optional(),
});

/** Searches one Stack Exchange site (`/2.3/search/advanced`), most relevant first. */
export function stackexchangeSearchTool(deps: NetworkToolDeps) {
  return defineTool({
    name: 'stackexchange_search',
    family: 'knowledge',
    description:
      'Search Stack Exchange questions on one site: stackoverflow (default), math, physics, stats, ' +
      'cstheory, chemistry, biology, etc. Returns titles, scores, whether answered, tags and links.',
    input: z.object({
      query: z.string().min(1).max(300),
      site: z
        .string()
        .regex(/^[a-z0-9.-]{2,40}$/, 'a site name such as "stackoverflow" or "math"')
        .optional(),
    }),
    toModelOutput: asUntrusted('stackexchange_search'),
    async execute({ query, site }, context) {
      const base = apiBase(deps, 'STACKEXCHANGE');
      const siteName = site ?? 'stackoverflow';
      return callApi('Stack Exchange', async () => {
        const url = withQuery(`${base}/2.3/search/advanced`, {
          order: 'desc',
          sort: 'relevance',
          q: query,
          site: siteName,
          pagesize: 6,
        });
        const { json, response } = await fetchJson(deps, 'stackexchange_search', url, {
          signal: context.signal,
        });
        const parsed = searchResponse.parse(json);
        if (parsed.error_message) throw new ToolCallError(`Stack Exchange: ${parsed.error_message}`);
        return {
          query,
          site: siteName,
          results: parsed.items.map((item) => ({
            title: decodeEntities(item.title),
            url: item.link,
            score: item.score,
            answers: item.answer_count,
            answered: item.is_answered || item.accepted_answer_id !== undefined,
            tags: item.tags.slice(0, 5),
            ...(item.creation_date
              ? { asked: new Date(item.creation_date * 1000).toISOString().slice(0, 10) }
              : {}),
          })),
          meta: metaOf(response),
        };
      });
    },
  });
}
