import { z } from 'zod';
import { defineTool } from '../../core/tool.ts';
import { bodyText } from '../http/http-client.ts';
import { callApi, metaOf, type NetworkToolDeps, ToolCallError } from '../http/tool-support.ts';
import { asUntrusted } from '../http/untrusted.ts';

const DEFAULT_MAX_CHARS = 20_000;

const ACCEPTED = [
  'text/html',
  'application/xhtml+xml',
  'text/plain',
  'text/markdown',
  'text/csv',
  'text/xml',
  'application/xml',
  'application/rss+xml',
  'application/atom+xml',
  'application/json',
  'application/pdf',
];

/**
 * Fetches a page a model or a search result names, through the SSRF guard, and returns its readable
 * text: HTML as Markdown of the main article, PDF as text, plain text and JSON as they are.
 */
export function webFetchTool(deps: NetworkToolDeps) {
  return defineTool({
    name: 'web_fetch',
    family: 'web',
    description:
      'Fetch a public web page or PDF and return its main content as Markdown/text (navigation and ' +
      'scripts removed). Use after web_search to read a result. `max_chars` limits the returned text.',
    input: z.object({
      url: z.string().min(1).max(2_000).describe('An absolute http(s) URL'),
      max_chars: z.number().int().min(200).max(100_000).optional(),
    }),
    toModelOutput: asUntrusted('web_fetch'),
    async execute({ url, max_chars }, context) {
      const maxChars = max_chars ?? DEFAULT_MAX_CHARS;
      return callApi(
        'web_fetch',
        async () => {
          const response = await deps.http.request({
            url,
            trust: 'guarded',
            accept: ACCEPTED,
            maxBytes: 10 * 1024 * 1024,
            timeoutMs: 25_000,
            signal: context.signal,
            cache: { namespace: 'web_fetch', ttlSeconds: deps.cacheTtl('web_fetch') },
          });
          const type = response.contentType.split(';')[0]?.trim() ?? '';
          let title = '';
          let content: string;
          let pages: number | undefined;
          if (type === 'application/pdf') {
            // The HTML and PDF readers are heavy to load; they load on the first page that needs them.
            const { pdfToText } = await import('./pdf-to-text.ts');
            const pdf = await pdfToText(response.body).catch((error: unknown) => {
              throw new ToolCallError(`Could not read the PDF at ${url}: ${(error as Error).message}`);
            });
            title = pdf.title ?? '';
            content = pdf.text;
            pages = pdf.pages;
          } else if (type === 'text/html' || type === 'application/xhtml+xml') {
            const { htmlToMarkdown } = await import('./html-to-markdown.ts');
            const page = htmlToMarkdown(bodyText(response), response.url);
            title = page.title;
            content = page.markdown;
          } else {
            content = bodyText(response);
          }
          const truncated = content.length > maxChars;
          return {
            url,
            ...(response.url !== url ? { finalUrl: response.url } : {}),
            title,
            contentType: type,
            ...(pages !== undefined ? { pages } : {}),
            content: truncated ? content.slice(0, maxChars) : content,
            chars: content.length,
            ...(truncated ? { truncated: `showing ${maxChars} of ${content.length} characters` } : {}),
            meta: metaOf(response),
          };
        },
        `Nothing found at ${url} (HTTP 404).`,
      );
    },
  });
}
