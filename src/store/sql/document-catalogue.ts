import type {
  CollectionStats,
  DocumentFilter,
  DocumentOrder,
  DocumentRecord,
  GroupBy,
  ListOptions,
  StoredChunk,
} from '../../documents/types.ts';
import { documentRecord, storedChunk } from '../document-rows.ts';
import type { SqlDatabase, SqlDialect } from './sql-database.ts';

type Row = Record<string, unknown>;

const ORDER_COLUMNS: Record<Exclude<DocumentOrder, 'title'>, string> = {
  added: 'd.added_at',
  size: 'd.size',
  pages: 'd.pages',
};

/**
 * SQL conditions on the `documents` table aliased `d` for a filter, with their values (`?` each), the
 * same rules in every backend: tags compared lower-cased, a title or file name containing the words as
 * written (case aside, the person's `%` and `_` taken literally).
 */
export function documentFilter(
  filter: DocumentFilter | undefined,
  dialect: SqlDialect,
): { sql: string[]; params: unknown[] } {
  const sql: string[] = [];
  const params: unknown[] = [];
  if (!filter) return { sql, params };
  const marks = (count: number) => Array.from({ length: count }, () => '?').join(', ');
  if (filter.documentIds?.length) {
    sql.push(`d.id IN (${marks(filter.documentIds.length)})`);
    params.push(...filter.documentIds);
  }
  if (filter.types?.length) {
    sql.push(`d.type IN (${marks(filter.types.length)})`);
    params.push(...filter.types);
  }
  if (filter.tags?.length) {
    sql.push(
      `EXISTS (SELECT 1 FROM document_tags t WHERE t.document_id = d.id AND t.tag IN (${marks(filter.tags.length)}))`,
    );
    params.push(...filter.tags.map((tag) => dialect.storedText(tag.toLowerCase())));
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
    const like = dialect.likeAnyCase;
    sql.push(`(d.title ${like} ? ESCAPE '\\' OR d.filename ${like} ? ESCAPE '\\')`);
    const pattern = `%${dialect.storedText(filter.titleContains).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    params.push(pattern, pattern);
  }
  return { sql, params };
}

/**
 * The document catalogue both backends read alike: documents, their chunks, counts and totals. Every
 * statement filters on the caller's user id, so an id that belongs to someone else behaves exactly like
 * one that does not exist. Each backend's document store adds what it does its own way (inserting and
 * removing with its search index, keyword search, vectors).
 */
export class SqlDocumentCatalogue {
  protected readonly sql: SqlDatabase;

  constructor(sql: SqlDatabase) {
    this.sql = sql;
  }

  async get(userId: string, id: string): Promise<DocumentRecord | undefined> {
    const row = await this.sql.one<Row>('SELECT * FROM documents WHERE id = ? AND user_id = ?', [id, userId]);
    return row && this.record(row);
  }

  async findByHash(userId: string, hash: string): Promise<DocumentRecord | undefined> {
    const row = await this.sql.one<Row>('SELECT * FROM documents WHERE hash = ? AND user_id = ?', [
      hash,
      userId,
    ]);
    return row && this.record(row);
  }

  async list(userId: string, options: ListOptions = {}): Promise<DocumentRecord[]> {
    const { where, params } = this.#where(userId, options.filter);
    const orderBy = options.orderBy ?? 'added';
    const order = orderBy === 'title' ? this.sql.dialect.titleOrder : ORDER_COLUMNS[orderBy];
    const direction = (options.descending ?? true) ? 'DESC' : 'ASC';
    const rows = await this.sql.all<Row>(
      `SELECT d.* FROM documents d WHERE ${where} ORDER BY ${order} ${direction}, d.id LIMIT ? OFFSET ?`,
      [...params, options.limit ?? Number.MAX_SAFE_INTEGER, options.offset ?? 0],
    );
    return rows.map((row) => this.record(row));
  }

  async count(userId: string, filter?: DocumentFilter): Promise<number> {
    const { where, params } = this.#where(userId, filter);
    const row = await this.sql.one<{ n: number }>(
      `SELECT count(*) AS n FROM documents d WHERE ${where}`,
      params,
    );
    return Number(row!.n);
  }

  /** A document's chunks in order, optionally only those overlapping [from, to). */
  async chunks(
    userId: string,
    documentId: string,
    range?: { from: number; to: number },
  ): Promise<StoredChunk[]> {
    const rows = range
      ? await this.sql.all<Row>(
          'SELECT * FROM chunks WHERE document_id = ? AND user_id = ? AND "end" > ? AND start < ? ORDER BY seq',
          [documentId, userId, range.from, range.to],
        )
      : await this.sql.all<Row>('SELECT * FROM chunks WHERE document_id = ? AND user_id = ? ORDER BY seq', [
          documentId,
          userId,
        ]);
    return rows.map((row) => storedChunk({ ...row, text: this.sql.dialect.readText(String(row.text)) }));
  }

  /** Document counts per group (type, tag, day or month added), largest group first. */
  async countBy(
    userId: string,
    groupBy: GroupBy,
    filter?: DocumentFilter,
  ): Promise<Array<{ group: string; count: number }>> {
    const { where, params } = this.#where(userId, filter);
    const rows = await this.sql.all<{ key: unknown; n: number }>(
      groupBy === 'tag'
        ? `SELECT t.tag AS key, count(*) AS n FROM documents d JOIN document_tags t ON t.document_id = d.id
           WHERE ${where} GROUP BY t.tag ORDER BY n DESC, key`
        : `SELECT ${groupBy === 'type' ? 'd.type' : this.sql.dialect.dateOf('d.added_at', groupBy)} AS key,
                  count(*) AS n FROM documents d WHERE ${where} GROUP BY key ORDER BY n DESC, key`,
      params,
    );
    return rows.map((row) => ({ group: this.sql.dialect.readText(String(row.key)), count: Number(row.n) }));
  }

  /** Totals over the caller's documents that match a filter. */
  async collectionStats(userId: string, filter?: DocumentFilter): Promise<CollectionStats> {
    const { where, params } = this.#where(userId, filter);
    const totals = (await this.sql.one<Record<string, number | null>>(
      `SELECT count(*) AS documents, CAST(coalesce(sum(pages), 0) AS BIGINT) AS pages,
              CAST(coalesce(sum(size), 0) AS BIGINT) AS bytes, CAST(coalesce(sum(chars), 0) AS BIGINT) AS characters,
              min(added_at) AS oldest, max(added_at) AS newest
       FROM documents d WHERE ${where}`,
      params,
    ))!;
    const chunks = await this.sql.one<{ n: number }>(
      `SELECT count(*) AS n FROM chunks c JOIN documents d ON d.id = c.document_id WHERE ${where}`,
      params,
    );
    const byType = Object.fromEntries(
      (await this.countBy(userId, 'type', filter)).map((entry) => [entry.group, entry.count]),
    );
    return {
      documents: Number(totals.documents),
      pages: Number(totals.pages),
      bytes: Number(totals.bytes),
      characters: Number(totals.characters),
      chunks: Number(chunks!.n),
      byType,
      oldestAddedAt: totals.oldest ?? null,
      newestAddedAt: totals.newest ?? null,
    };
  }

  /** A document row as a record, its free text read back (see SqlDialect.readText). */
  protected record(row: Row): DocumentRecord {
    const { readText } = this.sql.dialect;
    return documentRecord({
      ...row,
      title: readText(String(row.title)),
      filename: readText(String(row.filename)),
    });
  }

  #where(userId: string, filter: DocumentFilter | undefined): { where: string; params: unknown[] } {
    const conditions = documentFilter(filter, this.sql.dialect);
    return {
      where: ['d.user_id = ?', ...conditions.sql].join(' AND '),
      params: [userId, ...conditions.params],
    };
  }
}
