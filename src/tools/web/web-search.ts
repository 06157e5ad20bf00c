import { z } from 'zod';
import { defineTool } from '../../core/tool.ts';
import { callApi, metaOf, type NetworkToolDeps } from '../http/tool-support.ts';
import { asUntrusted } from '../http/untrusted.ts';
import { providerUnavailable, SEARCH_PROVIDERS, searchProviderName } from './search-providers.ts';

/** Web search through the configured provider; results carry their URLs for citing. */
export function webSearchTool(deps: NetworkToolDeps) {
  return defineTool({
    name: 'web_search',
    family: 'web',
    description:
      'Search the web. Returns titles, URLs and snippets of the top results; read a promising result ' +
      'with web_fetch before relying on it, and cite the URLs you used.',
    input: z.object({
      query: z.string().min(1).max(400),
      max_results: z.number().int().min(1).max(20).optional(),
    }),
    unavailable: () => providerUnavailable(deps.env),
    toModelOutput: asUntrusted('web_search'),
    async execute({ query, max_results }, context) {
      const name = searchProviderName(deps.env);
      const provider = SEARCH_PROVIDERS[name] ?? SEARCH_PROVIDERS.duckduckgo!;
      return callApi(`Web search (${provider.name})`, async () => {
        const { hits, responses } = await provider.search({
          deps,
          query,
          max: max_results ?? 8,
          signal: context.signal,
          tool: 'web_search',
        });
        return {
          query,
          provider: provider.name,
          results: hits,
          ...(hits.length === 0 ? { note: 'No results; try fewer or different words.' } : {}),
          meta: metaOf(...responses),
        };
      });
    },
  });
}
