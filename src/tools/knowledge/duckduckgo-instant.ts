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

const topic = z.object({ Text: z.string().optional(), FirstURL: z.string().optional() }).loose();
type Topic = z.infer<typeof topic>;
const instantAnswer = z
  .object({
    Heading: z.string().default(''),
    AbstractText: z.string().default(''),
    AbstractSource: z.string().default(''),
    AbstractURL: z.string().default(''),
    Answer: z.union([z.string(), z.record(z.string(), z.unknown())]).default(''),
    AnswerType: z.string().default(''),
    Definition: z.string().default(''),
    DefinitionURL: z.string().default(''),
    Type: z.string().default(''),
    RelatedTopics: z
      .array(z.union([topic, z.object({ Name: z.string(), Topics: z.array(topic) })]))
      .default([]),
    Results: z.array(topic).default([]),
  })
  .loose();

/** DuckDuckGo's Instant Answer API: a short abstract, answer or definition, and related links. */
export function duckduckgoInstantTool(deps: NetworkToolDeps) {
  return defineTool({
    name: 'duckduckgo_instant',
    family: 'knowledge',
    description:
      'DuckDuckGo Instant Answer: a quick abstract (often from Wikipedia), a direct answer or a definition ' +
      'for a topic or entity name, with related links. Not a full web search; use web_search for that.',
    input: z.object({ query: z.string().min(1).max(300) }),
    toModelOutput: asUntrusted('duckduckgo_instant'),
    async execute({ query }, context) {
      const base = apiBase(deps, 'DUCKDUCKGO');
      return callApi('DuckDuckGo', async () => {
        const url = withQuery(`${base}/`, {
          q: query,
          format: 'json',
          no_html: 1,
          no_redirect: 1,
          skip_disambig: 1,
          t: 'cadre',
        });
        const { json, response } = await fetchJson(deps, 'duckduckgo_instant', url, {
          signal: context.signal,
        });
        const answer = instantAnswer.parse(json);
        const related = answer.RelatedTopics.flatMap((item): Topic[] =>
          'Topics' in item && Array.isArray(item.Topics) ? (item.Topics as Topic[]) : [item as Topic],
        )
          .filter((item) => item.Text && item.FirstURL)
          .slice(0, 8)
          .map((item) => ({ text: item.Text ?? '', url: item.FirstURL ?? '' }));
        const direct = typeof answer.Answer === 'string' ? answer.Answer : '';
        const found = Boolean(answer.AbstractText || direct || answer.Definition || related.length);
        return {
          query,
          found,
          ...(answer.Heading ? { heading: answer.Heading } : {}),
          ...(answer.AbstractText ? { abstract: answer.AbstractText, source: answer.AbstractSource } : {}),
          ...(answer.AbstractURL ? { url: answer.AbstractURL } : {}),
          ...(direct ? { answer: direct } : {}),
          ...(answer.Definition
            ? { definition: answer.Definition, definitionUrl: answer.DefinitionURL }
            : {}),
          ...(answer.Results.length
            ? {
                officialSites: answer.Results.map((item) => item.FirstURL)
                  .filter(Boolean)
                  .slice(0, 3),
              }
            : {}),
          related,
          ...(found ? {} : { note: 'DuckDuckGo has no instant answer for this; try web_search.' }),
          meta: metaOf(response),
        };
      });
    },
  });
}
