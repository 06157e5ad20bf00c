import type { CollectionStats, DocumentFilter, GroupBy } from '../../../documents/types.ts';
import type { Database } from '../database.ts';
import { filterConditions } from './filter-sql.ts';

const GROUP_KEYS: Record<Exclude<GroupBy, 'tag'>, string> = {
  type: 'd.type',
  day: "strftime('%Y-%m-%d', d.added_at / 1000, 'unixepoch')",
  month: "strftime('%Y-%m', d.added_at / 1000, 'unixepoch')",
};

/** Document counts per group (type, tag, day or month added), largest group first. */
export function countBy(
  db: Database,
  userId: string,
  groupBy: GroupBy,
  filter?: DocumentFilter,
): Array<{ group: string; count: number }> {
  const { sql, params } = filterConditions(filter);
  const where = ['d.user_id = ?', ...sql].join(' AND ');
  const query =
    groupBy === 'tag'
      ? `SELECT t.tag AS key, count(*) AS n FROM documents d JOIN document_tags t ON t.document_id = d.id
         WHERE ${where} GROUP BY t.tag ORDER BY n DESC, key`
      : `SELECT ${GROUP_KEYS[groupBy]} AS key, count(*) AS n FROM documents d
         WHERE ${where} GROUP BY key ORDER BY n DESC, key`;
  return db
    .prepare(query)
    .all(userId, ...params)
    .map((row) => ({ group: String(row.key), count: Number(row.n) }));
}

/** Totals over the caller's documents that match a filter. */
export function collectionStats(db: Database, userId: string, filter?: DocumentFilter): CollectionStats {
  const { sql, params } = filterConditions(filter);
  const where = ['d.user_id = ?', ...sql].join(' AND ');
  const totals = db
    .prepare(
      `SELECT count(*) AS documents, coalesce(sum(pages), 0) AS pages, coalesce(sum(size), 0) AS bytes,
              coalesce(sum(chars), 0) AS characters, min(added_at) AS oldest, max(added_at) AS newest
       FROM documents d WHERE ${where}`,
    )
    .get(userId, ...params) as Record<string, number | null>;
  const chunks = db
    .prepare(`SELECT count(*) AS n FROM chunks c JOIN documents d ON d.id = c.document_id WHERE ${where}`)
    .get(userId, ...params) as { n: number };
  const byType = Object.fromEntries(
    countBy(db, userId, 'type', filter).map((entry) => [entry.group, entry.count]),
  );
  return {
    documents: Number(totals.documents),
    pages: Number(totals.pages),
    bytes: Number(totals.bytes),
    characters: Number(totals.characters),
    chunks: chunks.n,
    byType,
    oldestAddedAt: totals.oldest ?? null,
    newestAddedAt: totals.newest ?? null,
  };
}
