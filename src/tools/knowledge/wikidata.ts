import { z } from 'zod';
import { defineTool } from '../../core/tool.ts';
import {
  apiBase,
  callApi,
  fetchJson,
  metaOf,
  type NetworkToolDeps,
  withQuery,
} from '../http/tool-support.ts';
import { asUntrusted } from '../http/untrusted.ts';

const entitySearch = z.object({
  search: z.array(
    z.object({
      id: z.string(),
      label: z.string().optional(),
      description: z.string().optional(),
      concepturi: z.string().optional(),
    }),
  ),
});

/** Finds Wikidata entities (items, with their Q-ids) by label (`wbsearchentities`). */
export function wikidataSearchTool(deps: NetworkToolDeps) {
  return defineTool({
    name: 'wikidata_search',
    family: 'knowledge',
    description:
      'Find Wikidata entities by name. Returns Q-ids, labels, descriptions and URLs; use the Q-ids in ' +
      'wikidata_sparql queries.',
    input: z.object({
      query: z.string().min(1).max(300),
      limit: z.number().int().min(1).max(20).optional(),
    }),
    toModelOutput: asUntrusted('wikidata_search'),
    async execute({ query, limit }, context) {
      const base = apiBase(deps, 'WIKIDATA');
      return callApi('Wikidata', async () => {
        const url = withQuery(`${base}/w/api.php`, {
          action: 'wbsearchentities',
          search: query,
          language: 'en',
          uselang: 'en',
          type: 'item',
          limit: limit ?? 5,
          format: 'json',
        });
        const { json, response } = await fetchJson(deps, 'wikidata_search', url, { signal: context.signal });
        const { search } = entitySearch.parse(json);
        return {
          query,
          results: search.map((entity) => ({
            id: entity.id,
            label: entity.label ?? entity.id,
            ...(entity.description ? { description: entity.description } : {}),
            url: `${base}/wiki/${entity.id}`,
          })),
          meta: metaOf(response),
        };
      });
    },
  });
}
