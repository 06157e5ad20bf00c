import { z } from 'zod';
import { ModelBehaviorError } from '../../core/errors.ts';
import {
  DOCUMENT_TYPES,
  type DocumentFilter,
  type DocumentRecord,
  type SearchHit,
} from '../../documents/types.ts';

const DAY_MS = 86_400_000;
/** Each tag is one bound SQL parameter; SQLite refuses a statement with more than 32,766. */
const MAX_TAGS = 100;
const typeSchema = z.enum(DOCUMENT_TYPES);

/** The filter models may put on searches and collection queries; dates are ISO 8601 (`2025-03-01`). */
export const filterInputSchema = z
  .object({
    type: z
      .union([typeSchema, z.array(typeSchema).max(DOCUMENT_TYPES.length)])
      .optional()
      .describe(`Document type(s): ${DOCUMENT_TYPES.join(', ')}`),
    tag: z
      .union([z.string().max(200), z.array(z.string().max(200)).max(MAX_TAGS)])
      .optional()
      .describe('Documents with this tag (or any of these)'),
    added_after: z.string().optional().describe('Added on or after this ISO date, e.g. "2025-03-01"'),
    added_before: z.string().optional().describe('Added before this ISO date'),
    added_within_days: z
      .number()
      .int()
      .positive()
      .max(36_500)
      .optional()
      .describe('Added in the last N days'),
    title_contains: z.string().min(1).max(200).optional().describe('Title or filename contains this text'),
  })
  .strict();
export type FilterInput = z.infer<typeof filterInputSchema>;

/** Turns a model's filter into the store's, refusing dates that do not parse. */
export function toDocumentFilter(input: FilterInput | undefined, now: number): DocumentFilter {
  const filter: DocumentFilter = {};
  if (!input) return filter;
  if (input.type) filter.types = Array.isArray(input.type) ? input.type : [input.type];
  if (input.tag) filter.tags = Array.isArray(input.tag) ? input.tag : [input.tag];
  if (input.added_after) filter.addedAfter = parseDate('added_after', input.added_after);
  if (input.added_before) filter.addedBefore = parseDate('added_before', input.added_before);
  if (input.added_within_days) {
    const since = now - input.added_within_days * DAY_MS;
    filter.addedAfter = Math.max(filter.addedAfter ?? since, since);
  }
  if (input.title_contains) filter.titleContains = input.title_contains;
  return filter;
}

function parseDate(field: string, value: string): number {
  const time = Date.parse(value);
  if (Number.isNaN(time))
    throw new ModelBehaviorError(
      'tool_input',
      `${field}: "${value}" is not a date; use ISO 8601, e.g. "2025-03-01"`,
    );
  return time;
}

/** What a model sees of a document's metadata. */
export function describeDocument(document: DocumentRecord) {
  return {
    id: document.id,
    title: document.title,
    filename: document.filename,
    type: document.type,
    pages: document.pages,
    size_bytes: document.size,
    characters: document.chars,
    added: new Date(document.addedAt).toISOString(),
    tags: document.tags,
  };
}

const MAX_PASSAGE_CHARS = 700;

/** What a model sees of one search hit: where it is, a citation to copy, the passage. */
export function describeHit(hit: SearchHit) {
  const passage = hit.text.trim();
  return {
    document_id: hit.documentId,
    title: hit.title,
    type: hit.type,
    page: hit.page,
    offset: hit.start,
    cite: `[${hit.title}, p. ${hit.page}]`,
    snippet: hit.snippet.trim(),
    passage: passage.length > MAX_PASSAGE_CHARS ? `${passage.slice(0, MAX_PASSAGE_CHARS)}…` : passage,
    score: Number(hit.score.toPrecision(4)),
  };
}

/** The same message for an unknown id and for someone else's: nothing tells them apart. */
export function documentNotFound(id: string): Error {
  return new ModelBehaviorError(
    'tool_input',
    `No document with id "${id}" in your collection. Use search_documents or query_documents (operation "list") to find the right id.`,
  );
}
