import type { XMLParser } from 'fast-xml-parser';
import { z } from 'zod';
import { defineTool } from '../../core/tool.ts';
import { bodyText } from '../http/http-client.ts';
import {
  apiBase,
  callApi,
  clip,
  metaOf,
  type NetworkToolDeps,
  ToolCallError,
  withQuery,
} from '../http/tool-support.ts';
import { asUntrusted } from '../http/untrusted.ts';

let parser: XMLParser | undefined;
/** The Atom parser, made at the first arXiv answer: its XML library (a dozen modules) is not start-up's. */
async function atomParser(): Promise<XMLParser> {
  const { XMLParser } = await import('fast-xml-parser');
  parser ??= new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@_',
    parseTagValue: false,
    isArray: (name) => ['entry', 'author', 'link', 'category'].includes(name),
  });
  return parser;
}

const FIELD_PREFIX = /\b(ti|au|abs|co|jr|cat|rn|id|all):/;

/** `all:` on every word unless the model already used arXiv's field prefixes (ti:, au:, cat:, ...). */
export function arxivQuery(query: string): string {
  if (FIELD_PREFIX.test(query)) return query;
  const words = query.match(/"[^"]+"|\S+/g) ?? [];
  return words.map((word) => `all:${word}`).join(' AND ');
}

const text = (value: unknown) =>
  (typeof value === 'string' ? value : String((value as any)?.['#text'] ?? '')).replace(/\s+/g, ' ').trim();

export interface ArxivPaper {
  id: string;
  title: string;
  authors: string[];
  published: string;
  summary: string;
  url: string;
  pdf?: string;
  category?: string;
}

/** Parses an arXiv Atom feed into papers; an error entry (arXiv's way of reporting bad queries) throws. */
export async function parseArxivFeed(xml: string): Promise<ArxivPaper[]> {
  const document = (await atomParser()).parse(xml) as any;
  const feed = document?.feed;
  if (!feed || typeof feed !== 'object') throw new SyntaxError('not an Atom feed');
  const entries: any[] = feed.entry ?? [];
  return entries.map((entry) => {
    const id = text(entry.id);
    if (/api\/errors/.test(id)) throw new ToolCallError(`arXiv rejected the query: ${text(entry.summary)}`);
    const links: any[] = entry.link ?? [];
    const abs = links.find((link) => link['@_rel'] === 'alternate')?.['@_href'] ?? id;
    const pdf = links.find((link) => link['@_title'] === 'pdf')?.['@_href'];
    const category = entry['arxiv:primary_category']?.['@_term'];
    return {
      id: id.replace(/^https?:\/\/arxiv\.org\/abs\//, ''),
      title: text(entry.title),
      authors: (entry.author ?? []).map((author: any) => text(author.name)),
      published: text(entry.published).slice(0, 10),
      summary: clip(text(entry.summary), 600),
      url: abs,
      ...(pdf ? { pdf } : {}),
      ...(category ? { category } : {}),
    };
  });
}

/** Searches arXiv papers (export API, Atom). */
export function arxivSearchTool(deps: NetworkToolDeps) {
  return defineTool({
    name: 'arxiv_search',
    family: 'knowledge',
    description:
      'Search arXiv for scientific papers. Plain words match anywhere; arXiv field prefixes work too ' +
      '(ti:"attention is all you need", au:hinton, cat:cs.LG). Returns titles, authors, dates, abstracts and links.',
    input: z.object({
      query: z.string().min(1).max(500),
      max_results: z.number().int().min(1).max(25).optional(),
    }),
    toModelOutput: asUntrusted('arxiv_search'),
    async execute({ query, max_results }, context) {
      const base = apiBase(deps, 'ARXIV');
      return callApi('arXiv', async () => {
        const url = withQuery(`${base}/api/query`, {
          search_query: arxivQuery(query),
          start: 0,
          max_results: max_results ?? 5,
          sortBy: 'relevance',
        });
        const response = await deps.http.request({
          url,
          trust: 'endpoint',
          accept: ['application/atom+xml', 'application/xml', 'text/xml'],
          signal: context.signal,
          cache: { namespace: 'arxiv_search', ttlSeconds: deps.cacheTtl('arxiv_search') },
        });
        return { query, results: await parseArxivFeed(bodyText(response)), meta: metaOf(response) };
      });
    },
  });
}
