import { z } from 'zod';
import { defineTool } from '../../core/tool.ts';
import type { HttpResponse } from '../http/http-client.ts';
import { callApi, metaOf, type NetworkToolDeps } from '../http/tool-support.ts';
import { asUntrusted } from '../http/untrusted.ts';
import { commonsImages } from './image-providers.ts';
import {
  providerUnavailable,
  SEARCH_PROVIDERS,
  type SearchCall,
  searchProviderName,
} from './search-providers.ts';

export type { ImageHit } from './image-providers.ts';

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
      const call: SearchCall = {
        deps,
        query,
        max: max_results ?? 6,
        signal: context.signal,
        tool: 'image_search',
      };
      // The configured search provider's image API when it has one and is set up; else Commons.
      const provider = SEARCH_PROVIDERS[searchProviderName(deps.env)];
      const run = provider?.images && !providerUnavailable(deps.env) ? provider.images : commonsImages;
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
