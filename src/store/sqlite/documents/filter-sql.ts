import type { SQLInputValue } from 'node:sqlite';
import type { DocumentFilter } from '../../../documents/types.ts';

/** SQL conditions on the `documents` table aliased `d`, with their parameters, for a filter. */
export function filterConditions(filter: DocumentFilter | undefined): {
  sql: string[];
  params: SQLInputValue[];
} {
  const sql: string[] = [];
  const params: SQLInputValue[] = [];
  if (!filter) return { sql, params };
  if (filter.documentIds?.length) {
    sql.push(`d.id IN (${placeholders(filter.documentIds.length)})`);
    params.push(...filter.documentIds);
  }
  if (filter.types?.length) {
    sql.push(`d.type IN (${placeholders(filter.types.length)})`);
    params.push(...filter.types);
  }
  if (filter.tags?.length) {
    sql.push(
      `EXISTS (SELECT 1 FROM document_tags t WHERE t.document_id = d.id AND t.tag IN (${placeholders(filter.tags.length)}))`,
    );
    params.push(...filter.tags.map((tag) => tag.toLowerCase()));
  }
  if (filter.addedAfter !== undefined) {
    sql.push('d.added_at >= ?');
    params.push(filter.addedAfter);
  }
  if (filter.addedBefore !== undefined) {
    sql.push('d.added_at < ?');
    params.push(filter.addedBefore);
  }
  if (filter.titleContains) {
    sql.push("(d.title LIKE ? ESCAPE '\\' OR d.filename LIKE ? ESCAPE '\\')");
    const pattern = `%${filter.titleContains.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    params.push(pattern, pattern);
  }
  return { sql, params };
}

function placeholders(count: number): string {
  return Array.from({ length: count }, () => '?').join(', ');
}
