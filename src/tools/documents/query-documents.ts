import { z } from 'zod';
import { defineTool } from '../../core/tool.ts';
import type { DocumentStore } from '../../documents/document-store.ts';
import { describeDocument, filterInputSchema, toDocumentFilter } from './filter-input.ts';
import type { DocumentToolOptions } from './options.ts';

/**
 * Questions about the collection rather than its content ("how many PDFs were added this week?"), asked
 * as a fixed set of structured operations. A model never writes SQL: every field maps to a bound parameter
 * or to one of a few known columns.
 */
export function queryDocumentsTool(store: DocumentStore, options: DocumentToolOptions) {
  return defineTool({
    name: 'query_documents',
    family: 'documents',
    description:
      "Counts, lists and statistics over the user's document collection (not its content). operation: " +
      '"count" (optionally group_by type, tag, day or month), "list" (titles, ids, types, pages, dates, tags; ' +
      'order_by added, title, size or pages) or "stats" (totals of documents, pages, bytes, chunks, by type). ' +
      'Narrow with filter, e.g. {type: "pdf", added_within_days: 7}.',
    input: z.object({
      operation: z.enum(['count', 'list', 'stats']),
      filter: filterInputSchema.optional(),
      group_by: z.enum(['type', 'tag', 'day', 'month']).optional().describe('For count: one count per group'),
      order_by: z.enum(['added', 'title', 'size', 'pages']).optional().describe('For list (default added)'),
      descending: z.boolean().optional().describe('For list (default true: newest, largest first)'),
      limit: z.number().int().min(1).max(200).optional().describe('For list (default 50)'),
    }),
    async execute(input, context) {
      const filter = toDocumentFilter(input.filter, (options.now ?? Date.now)());
      const userId = context.userId;
      switch (input.operation) {
        case 'count':
          if (input.group_by) {
            const groups = await store.countBy(userId, input.group_by, filter);
            return {
              operation: 'count',
              group_by: input.group_by,
              total: await store.count(userId, filter),
              groups,
            };
          }
          return { operation: 'count', count: await store.count(userId, filter) };
        case 'list': {
          const limit = input.limit ?? 50;
          const documents = await store.list(userId, {
            filter,
            orderBy: input.order_by ?? 'added',
            descending: input.descending ?? true,
            limit,
          });
          return {
            operation: 'list',
            total: await store.count(userId, filter),
            documents: documents.map(describeDocument),
          };
        }
        case 'stats': {
          const stats = await store.collectionStats(userId, filter);
          return {
            operation: 'stats',
            documents: stats.documents,
            pages: stats.pages,
            bytes: stats.bytes,
            characters: stats.characters,
            chunks: stats.chunks,
            by_type: stats.byType,
            oldest_added: stats.oldestAddedAt === null ? null : new Date(stats.oldestAddedAt).toISOString(),
            newest_added: stats.newestAddedAt === null ? null : new Date(stats.newestAddedAt).toISOString(),
          };
        }
      }
    },
  });
}
