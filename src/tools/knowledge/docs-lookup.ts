import { z } from 'zod';
import { defineTool } from '../../core/tool.ts';
import { bodyText } from '../http/http-client.ts';
import {
  apiBase,
  callApi,
  clip,
  fetchJson,
  metaOf,
  type NetworkToolDeps,
  ToolCallError,
  withQuery,
} from '../http/tool-support.ts';
import { asUntrusted } from '../http/untrusted.ts';
import { type CodeExample, splitDocs } from './context7-snippets.ts';

const library = z
  .object({
    id: z.string(),
    title: z.string().optional(),
    name: z.string().optional(),
    description: z.string().optional(),
  })
  .loose();
const searchResponse = z.union([z.array(library), z.object({ results: z.array(library) }).loose()]);

const MAX_DOCS_CHARS = 8_000;
const MAX_CODE_CHARS = 8_000;

/** The first examples whose code fits in `maxChars` together (at least one, clipped if it alone is too long). */
function keepWithin(examples: CodeExample[], maxChars: number): CodeExample[] {
  const kept: CodeExample[] = [];
  let used = 0;
  for (const example of examples) {
    if (used + example.code.length > maxChars) {
      if (!kept.length) kept.push({ ...example, code: clip(example.code, maxChars) });
      break;
    }
    kept.push(example);
    used += example.code.length;
  }
  return kept;
}

/**
 * Up-to-date library documentation from Context7: resolve the library name to a Context7 id, then fetch
 * the snippets most relevant to the topic. Works without a key (lower limits); `CONTEXT7_API_KEY` raises them.
 */
export function docsLookupTool(deps: NetworkToolDeps) {
  return defineTool({
    name: 'docs_lookup',
    family: 'knowledge',
    description:
      'Current documentation for a software library (via Context7): the prose as `content` and the code ' +
      'examples separately as `codeExamples` (title, source, language, code). Give the library name ' +
      '("next.js", "zod") or a Context7 id ("/vercel/next.js"), and optionally a topic ("routing").',
    input: z.object({
      library: z.string().min(1).max(200),
      topic: z.string().max(300).optional(),
    }),
    toModelOutput: asUntrusted('docs_lookup'),
    async execute({ library: name, topic }, context) {
      const base = apiBase(deps, 'CONTEXT7');
      const key = deps.env.CONTEXT7_API_KEY;
      const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
      const question = topic ?? name;
      return callApi(
        'Context7',
        async () => {
          const responses = [];
          let libraryId = name.startsWith('/') ? name : undefined;
          let title: string | undefined;
          if (!libraryId) {
            const found = await fetchJson(
              deps,
              'docs_lookup',
              withQuery(`${base}/api/v2/libs/search`, { libraryName: name, query: question }),
              {
                headers,
                signal: context.signal,
              },
            );
            responses.push(found.response);
            const parsed = searchResponse.parse(found.json);
            const first = (Array.isArray(parsed) ? parsed : parsed.results)[0];
            if (!first)
              throw new ToolCallError(`Context7 knows no library called "${name}"; try another spelling.`);
            libraryId = first.id;
            title = first.title ?? first.name;
          }
          const docs = await deps.http.request({
            url: withQuery(`${base}/api/v2/context`, { libraryId, query: question, type: 'txt' }),
            trust: 'endpoint',
            headers,
            accept: ['text/plain', 'text/markdown', 'text/*'],
            signal: context.signal,
            cache: { namespace: 'docs_lookup', ttlSeconds: deps.cacheTtl('docs_lookup') },
          });
          responses.push(docs);
          const { prose, codeExamples } = splitDocs(bodyText(docs));
          const examples = keepWithin(codeExamples, MAX_CODE_CHARS);
          return {
            library: name,
            libraryId,
            ...(title ? { title } : {}),
            ...(topic ? { topic } : {}),
            content: clip(prose, MAX_DOCS_CHARS),
            codeExamples: examples,
            ...(prose.length > MAX_DOCS_CHARS || examples.length < codeExamples.length
              ? { truncated: true }
              : {}),
            url: `https://context7.com${libraryId}`,
            meta: metaOf(...responses),
          };
        },
        `Context7 has no documentation for "${name}"${topic ? ` on "${topic}"` : ''}.`,
      );
    },
  });
}
