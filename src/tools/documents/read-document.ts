import { z } from 'zod';
import { defineTool } from '../../core/tool.ts';
import type { DocumentStore } from '../../documents/document-store.ts';
import { documentNotFound } from './filter-input.ts';

const DEFAULT_CHARS = 8_000;
const MAX_CHARS = 50_000;

/** Reads a range of one of the caller's documents, in order, with the pages it spans. */
export function readDocumentTool(store: DocumentStore) {
  return defineTool({
    name: 'read_document',
    family: 'documents',
    description:
      "Read the text of one of the user's documents in order, from a character offset (default 0) for up to " +
      `max_chars characters (default ${DEFAULT_CHARS}). The result says which pages it spans and the next_offset to continue.`,
    input: z.object({
      document_id: z.string().min(1),
      offset: z.number().int().min(0).optional(),
      max_chars: z.number().int().min(100).max(MAX_CHARS).optional(),
    }),
    async execute({ document_id, offset = 0, max_chars = DEFAULT_CHARS }, context) {
      const document = await store.get(context.userId, document_id);
      if (!document) throw documentNotFound(document_id);
      const end = Math.min(offset + max_chars, document.chars);
      const chunks = await store.chunks(context.userId, document_id, { from: offset, to: end });
      const text = chunks
        .map((chunk) => chunk.text)
        .join('')
        .slice(offset - (chunks[0]?.start ?? offset), end - (chunks[0]?.start ?? offset));
      return {
        document_id,
        title: document.title,
        type: document.type,
        pages: document.pages,
        total_chars: document.chars,
        offset,
        end,
        next_offset: end < document.chars ? end : null,
        first_page: chunks[0]?.page ?? null,
        last_page: chunks.at(-1)?.page ?? null,
        text,
      };
    },
  });
}
