import type { DocumentFilter } from '../../../documents/types.ts';
import type { Params } from '../database.ts';
import { toPgText } from '../text.ts';

/** SQL conditions on the `documents` table aliased `d` for a filter, their values added to `params`. */
export function filterConditions(filter: DocumentFilter | undefined, params: Params): string[] {
  const sql: string[] = [];
  if (!filter) return sql;
  if (filter.documentIds?.length) sql.push(`d.id = ANY(${params.add(filter.documentIds)}::text[])`);
  if (filter.types?.length) sql.push(`d.type = ANY(${params.add(filter.types)}::text[])`);
  if (filter.tags?.length) {
    const tags = params.add(filter.tags.map((tag) => toPgText(tag.toLowerCase())));
    sql.push(
      `EXISTS (SELECT 1 FROM document_tags t WHERE t.document_id = d.id AND t.tag = ANY(${tags}::text[]))`,
    );
  }
  if (filter.addedAfter !== undefined) sql.push(`d.added_at >= ${params.add(filter.addedAfter)}`);
  if (filter.addedBefore !== undefined) sql.push(`d.added_at < ${params.add(filter.addedBefore)}`);
  if (filter.titleContains) {
    // ILIKE: case-insensitive, as SQLite's LIKE is; the person's % and _ are literal.
    const pattern = params.add(`%${toPgText(filter.titleContains).replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    sql.push(`(d.title ILIKE ${pattern} ESCAPE '\\' OR d.filename ILIKE ${pattern} ESCAPE '\\')`);
  }
  return sql;
}
