import { z } from 'zod';
import { defineTool } from '../../core/tool.ts';
import { bodyText } from '../http/http-client.ts';
import { HttpStatusError } from '../http/http-errors.ts';
import {
  apiBase,
  apiFailure,
  metaOf,
  type NetworkToolDeps,
  ToolCallError,
  withQuery,
} from '../http/tool-support.ts';
import { asUntrusted } from '../http/untrusted.ts';

/** Wolfram|Alpha's Short Answers API: one line of computed answer. Needs `WOLFRAM_APP_ID`. */
export function wolframQueryTool(deps: NetworkToolDeps) {
  return defineTool({
    name: 'wolfram_query',
    family: 'knowledge',
    description:
      'Ask Wolfram|Alpha for a short computed answer: exact maths (integrals, equations, series), unit ' +
      'conversions, physical constants, dates. Phrase it as a query, e.g. "integrate x^2 sin x dx".',
    input: z.object({ query: z.string().min(1).max(500) }),
    unavailable: () =>
      deps.env.WOLFRAM_APP_ID
        ? undefined
        : { reason: 'no Wolfram|Alpha App ID is set', enableWith: 'WOLFRAM_APP_ID' },
    toModelOutput: asUntrusted('wolfram_query'),
    async execute({ query }, context) {
      const appId = deps.env.WOLFRAM_APP_ID;
      if (!appId) throw new ToolCallError('wolfram_query needs WOLFRAM_APP_ID.');
      const base = apiBase(deps, 'WOLFRAM');
      try {
        const response = await deps.http.request({
          url: withQuery(`${base}/v1/result`, { i: query, appid: appId, units: 'metric' }),
          trust: 'endpoint',
          accept: ['text/plain', 'text/*'],
          signal: context.signal,
          cache: { namespace: 'wolfram_query', ttlSeconds: deps.cacheTtl('wolfram_query') },
        });
        return {
          query,
          answer: bodyText(response).trim(),
          url: withQuery('https://www.wolframalpha.com/input', { i: query }),
          meta: metaOf(response),
        };
      } catch (error) {
        if (HttpStatusError.is(error) && (error.status === 501 || error.status === 400)) {
          throw new ToolCallError(
            `Wolfram|Alpha has no short answer for "${query}"; rephrase it as a plain computation or use calculate.`,
          );
        }
        throw apiFailure('Wolfram|Alpha', error);
      }
    },
  });
}
