import { z } from 'zod';
import { defineTool } from '../../core/tool.ts';
import type { DocumentStore } from '../../documents/document-store.ts';
import { searchDocuments } from '../../documents/search.ts';
import { describeHit, filterInputSchema, toDocumentFilter } from './filter-input.ts';
import type { DocumentToolOptions } from './options.ts';

/** Full-text (and, when configured, hybrid) search over the caller's documents. */
export function searchDocumentsTool(store: DocumentStore, options: DocumentToolOptions) {
  return defineTool({
    name: 'search_documents',
    family: 'documents',
    description:
      "Search the user's uploaded documents (PDF, Markdown, HTML, text, CSV, XLSX) and get the best-matching " +
      'passages with document id, title and page to cite. Query syntax: plain words (all must match, else any), ' +
      '"exact phrase", prefix* and -excluded words. Narrow with document_id or filter (type, tag, dates).',
    input: z.object({
      query: z.string().min(1).max(500).describe('Words to find, e.g. "termination notice period"'),
      limit: z.number().int().min(1).max(50).optional().describe('Passages to return (default 8)'),
      document_id: z.string().optional().describe('Search only this document'),
      filter: filterInputSchema.optional(),
    }),
    async execute(input, context) {
      const filter = toDocumentFilter(input.filter, (options.now ?? Date.now)());
      if (input.document_id) filter.documentIds = [input.document_id];
      const hits = await searchDocuments(store, context.userId, input.query, {
        limit: input.limit ?? 8,
        filter,
        signal: context.signal,
        ...(options.embedder ? { embedder: options.embedder } : {}),
      });
      return {
        query: input.query,
        results: hits.map(describeHit),
        ...(hits.length
          ? {}
          : {
              note: 'No matching passages. Try other or fewer words, a prefix such as "invoic*", or no filter.',
            }),
      };
    },
  });
}
