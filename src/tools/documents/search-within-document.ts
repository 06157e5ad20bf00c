import { z } from 'zod';
import { ModelBehaviorError } from '../../core/errors.ts';
import { defineTool } from '../../core/tool.ts';
import type { DocumentStore } from '../../documents/document-store.ts';
import { searchDocuments } from '../../documents/search.ts';
import { describeHit, documentNotFound } from './filter-input.ts';
import type { DocumentToolOptions } from './options.ts';

/**
 * Search inside the one document an `analyze_document` run is about. The document comes from the run's
 * declared input, never from the model, so the model cannot point it anywhere else.
 */
export function searchWithinDocumentTool(store: DocumentStore, options: DocumentToolOptions) {
  return defineTool({
    name: 'search_within_document',
    family: 'documents',
    explicitOnly: true,
    description:
      'Search the document you are analysing for passages (with their page). Plain words, "exact phrase", prefix*.',
    input: z.object({
      query: z.string().min(1).max(500),
      limit: z.number().int().min(1).max(30).optional().describe('Passages to return (default 6)'),
    }),
    async execute({ query, limit }, context) {
      const documentId = context.inputs.document_id;
      if (typeof documentId !== 'string' || !documentId) {
        throw new ModelBehaviorError(
          'tool_input',
          'search_within_document only works inside analyze_document, which names its document.',
        );
      }
      if (!(await store.get(context.userId, documentId))) throw documentNotFound(documentId);
      const hits = await searchDocuments(store, context.userId, query, {
        limit: limit ?? 6,
        filter: { documentIds: [documentId] },
        signal: context.signal,
        ...(options.embedder ? { embedder: options.embedder } : {}),
      });
      return {
        query,
        document_id: documentId,
        results: hits.map((hit) => {
          const { document_id: _document, title: _title, type: _type, ...passage } = describeHit(hit);
          return passage;
        }),
        ...(hits.length
          ? {}
          : { note: 'No matching passages in this document. Try other words or a prefix*.' }),
      };
    },
  });
}
