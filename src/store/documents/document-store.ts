import type { SQLInputValue, StatementSync } from 'node:sqlite';
import type { DocumentStore } from '../../documents/document-store.ts';
import type {
  CollectionStats,
  DocumentFilter,
  DocumentOrder,
  DocumentRecord,
  DocumentType,
  GroupBy,
  ListOptions,
  NewDocument,
  SearchHit,
  StoredChunk,
} from '../../documents/types.ts';
import { type Database, transaction } from '../database.ts';
import { allocateSlot, chunkCount, reserveChunkIds } from './chunk-ids.ts';
import { collectionStats, countBy } from './collection-queries.ts';
import { filterConditions } from './filter-sql.ts';
import { hasOperators, onlyCommonTerms, plainTerms, toMatchExpression } from './fts-query.ts';
import { createUserIndex, indexForSlot, userIndex } from './user-index.ts';

/** In the any-term fallback, words found in more than this share of chunks are dropped. */
const FALLBACK_COMMON_SHARE = 0.05;

const ORDER_COLUMNS: Record<DocumentOrder, string> = {
  added: 'd.added_at',
  title: 'd.title COLLATE NOCASE',
  size: 'd.size',
  pages: 'd.pages',
};

/**
 * The document store. Every method takes the caller's user id and every statement filters on it, so an id
 * that belongs to someone else behaves exactly like an id that does not exist.
 */
export class SqliteDocumentStore implements DocumentStore {
  readonly db: Database;
  #statements = new Map<string, StatementSync>();

  constructor(db: Database) {
    this.db = db;
  }

  /** Stores a document with its tags and chunks in one transaction, indexing the chunks in the user's index. */
  insert(userId: string, document: NewDocument): DocumentRecord {
    const tags = normalizeTags(document.tags);
    const chars = document.chunks.reduce((total, chunk) => total + chunk.text.length, 0);
    transaction(this.db, () => {
      this.#statement(
        `INSERT INTO documents (id, user_id, title, filename, type, pages, size, chars, hash, tags, added_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        document.id,
        userId,
        document.title,
        document.filename,
        document.type,
        document.pages,
        document.size,
        chars,
        document.hash,
        JSON.stringify(tags),
        document.addedAt,
      );
      const insertTag = this.#statement(
        'INSERT INTO document_tags (document_id, user_id, tag) VALUES (?, ?, ?)',
      );
      for (const tag of tags) insertTag.run(document.id, userId, tag);
      const insertChunk = this.#statement(
        'INSERT INTO chunks (id, document_id, user_id, seq, page, start, end, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      );
      const { slot, created } = allocateSlot(this.db, userId);
      const index = created ? createUserIndex(this.db, slot) : indexForSlot(slot);
      const indexChunk = this.#statement(`INSERT INTO ${index.fts} (rowid, text) VALUES (?, ?)`);
      const firstId = reserveChunkIds(this.db, slot, document.chunks.length);
      for (const [seq, chunk] of document.chunks.entries()) {
        insertChunk.run(
          firstId + seq,
          document.id,
          userId,
          seq,
          chunk.page,
          chunk.start,
          chunk.start + chunk.text.length,
          chunk.text,
        );
        indexChunk.run(firstId + seq, chunk.text);
      }
    });
    const { chunks: _chunks, ...metadata } = document;
    return { ...metadata, userId, tags, chars };
  }

  get(userId: string, id: string): DocumentRecord | undefined {
    const row = this.#statement('SELECT * FROM documents WHERE id = ? AND user_id = ?').get(id, userId);
    return row ? toRecord(row) : undefined;
  }

  findByHash(userId: string, hash: string): DocumentRecord | undefined {
    const row = this.#statement('SELECT * FROM documents WHERE hash = ? AND user_id = ?').get(hash, userId);
    return row ? toRecord(row) : undefined;
  }

  list(userId: string, options: ListOptions = {}): DocumentRecord[] {
    const { sql, params } = filterConditions(options.filter);
    const order = ORDER_COLUMNS[options.orderBy ?? 'added'];
    const direction = (options.descending ?? true) ? 'DESC' : 'ASC';
    const rows = this.db
      .prepare(
        `SELECT d.* FROM documents d WHERE ${['d.user_id = ?', ...sql].join(' AND ')}
         ORDER BY ${order} ${direction}, d.id LIMIT ? OFFSET ?`,
      )
      .all(userId, ...params, options.limit ?? -1, options.offset ?? 0);
    return rows.map(toRecord);
  }

  count(userId: string, filter?: DocumentFilter): number {
    const { sql, params } = filterConditions(filter);
    const row = this.db
      .prepare(`SELECT count(*) AS n FROM documents d WHERE ${['d.user_id = ?', ...sql].join(' AND ')}`)
      .get(userId, ...params) as { n: number };
    return row.n;
  }

  /** Removes a document and everything derived from it; false when the caller has no such document. */
  remove(userId: string, id: string): boolean {
    return transaction(this.db, () => {
      const index = userIndex(this.db, userId);
      if (!index || !this.get(userId, id)) return false;
      this.#statement('DELETE FROM chunk_vectors WHERE document_id = ? AND user_id = ?').run(id, userId);
      // An external-content index forgets a row only when told its old text, so before the row goes.
      this.#statement(
        `INSERT INTO ${index.fts} (${index.fts}, rowid, text)
         SELECT 'delete', id, text FROM chunks WHERE document_id = ? AND user_id = ?`,
      ).run(id, userId);
      this.#statement('DELETE FROM chunks WHERE document_id = ? AND user_id = ?').run(id, userId);
      this.#statement('DELETE FROM documents WHERE id = ? AND user_id = ?').run(id, userId);
      return true;
    });
  }

  /** A document's chunks in order, optionally only those overlapping [from, to). */
  chunks(userId: string, documentId: string, range?: { from: number; to: number }): StoredChunk[] {
    const rows = range
      ? this.#statement(
          `SELECT * FROM chunks WHERE document_id = ? AND user_id = ? AND end > ? AND start < ? ORDER BY seq`,
        ).all(documentId, userId, range.from, range.to)
      : this.#statement('SELECT * FROM chunks WHERE document_id = ? AND user_id = ? ORDER BY seq').all(
          documentId,
          userId,
        );
    return rows.map(toChunk);
  }

  /**
   * Keyword search: chunks matching an FTS5 expression (see `toMatchExpression`), best BM25 first.
   *
   * 1. Rank: in the caller's own index (see user-index.ts), so neither the matches nor BM25's statistics
   *    involve anyone else's chunks; a filter adds a join on a covering index of owners. `ranked: false` (a
   *    query of only very common words, which BM25 cannot rank anyway) takes the first matches in
   *    collection order and scores just those.
   * 2. Snippets for the top rows, in one pass over the index between the lowest and highest of their ids.
   *    Looking each row up on its own would set the query up again per row: a prefix term's doclist is
   *    rebuilt each time, and bm25 recounts every term's matches in the whole index to get its weight.
   * 3. Titles and texts for the top rows, which are checked against the caller once more.
   */
  search(
    userId: string,
    match: string,
    options: { filter?: DocumentFilter; limit?: number; ranked?: boolean } = {},
  ): SearchHit[] {
    const index = userIndex(this.db, userId);
    if (!index) return [];
    const fts = index.fts;
    const { documentIds, ...rest } = options.filter ?? {};
    const { sql, params } = filterConditions(rest);
    const conditions = [`${fts} MATCH ?`];
    const joined = sql.length > 0 || Boolean(documentIds?.length);
    if (joined) conditions.push('c.user_id = ?', ...sql);
    const idParams: SQLInputValue[] = documentIds?.length ? documentIds : [];
    if (idParams.length) conditions.push(`c.document_id IN (${idParams.map(() => '?').join(', ')})`);
    const ranked = options.ranked ?? true;
    const rows = this.db
      .prepare(
        `WITH top AS MATERIALIZED (
           SELECT ${fts}.rowid AS id, bm25(${fts}) AS score
           FROM ${fts}
           ${joined ? `JOIN chunks c INDEXED BY chunks_owner ON c.id = ${fts}.rowid` : ''}
           ${sql.length ? 'JOIN documents d ON d.id = c.document_id' : ''}
           WHERE ${conditions.join(' AND ')}
           ${ranked ? 'ORDER BY score' : ''} LIMIT ?
         ),
         snippets AS MATERIALIZED (
           SELECT ${fts}.rowid AS id, snippet(${fts}, 0, '«', '»', '…', 24) AS snippet
           FROM ${fts}
           WHERE ${fts} MATCH ?
             AND ${fts}.rowid >= (SELECT min(id) FROM top) AND ${fts}.rowid <= (SELECT max(id) FROM top)
             AND +${fts}.rowid IN (SELECT id FROM top)
         )
         SELECT c.id, c.document_id, c.page, c.start, c.end, c.text, d.title, d.filename, d.type,
                s.snippet, top.score
         FROM top
         JOIN snippets s ON s.id = top.id
         JOIN chunks c ON c.id = top.id
         JOIN documents d ON d.id = c.document_id
         WHERE c.user_id = ? AND d.user_id = ?
         ORDER BY top.score, c.id`,
      )
      .all(
        match,
        ...(joined ? [userId, ...params] : []),
        ...idParams,
        options.limit ?? 10,
        match,
        userId,
        userId,
      );
    return rows.map((row) => toHit(row, String(row.snippet), -Number(row.score)));
  }

  /**
   * Which of these words are in more than `share` of the caller's chunks (once they have at least
   * `minChunks`). Such words carry almost no BM25 weight, and ranking every chunk that holds them is what
   * makes a query slow. Only the caller's own chunks count, so the answer says nothing of anyone else's.
   * Words are looked up as typed; a word the stemmer changes is simply never reported common.
   */
  commonTerms(userId: string, words: string[], share = 0.2, minChunks = 2_000): Set<string> {
    const common = new Set<string>();
    const index = userIndex(this.db, userId);
    if (!words.length || !index) return common;
    const total = chunkCount(this.db, index.slot);
    if (total < minChunks) return common;
    const lookup = this.#statement(`SELECT doc FROM ${index.vocab} WHERE term = ?`);
    for (const word of new Set(words.map((item) => item.toLowerCase()))) {
      const row = lookup.get(word) as { doc: number } | undefined;
      if (row && row.doc > total * share) common.add(word);
    }
    return common;
  }

  /**
   * BM25 search over FTS5 for a person's query, all terms first, any term as the fallback. Words found
   * in a fifth of the caller's chunks or more are left out of the match (they carry little BM25 weight);
   * a query made only of them is answered unranked.
   */
  keywordSearch(
    userId: string,
    query: string,
    options: { limit: number; filter?: DocumentFilter },
  ): SearchHit[] {
    const common = this.commonTerms(userId, plainTerms(query));
    const strict = toMatchExpression(query, 'all', common);
    if (!strict) return [];
    const ranked = !onlyCommonTerms(query, common);
    const hits = this.search(userId, strict, { ...options, ranked });
    if (hits.length || hasOperators(query)) return hits;
    // "Any term" ranks the union of every term's matches; words in many chunks would make that union
    // large while adding little to the ranking, so the fallback leaves them out when rarer words remain.
    const frequent = this.commonTerms(userId, plainTerms(query), FALLBACK_COMMON_SHARE);
    const loose = toMatchExpression(query, 'any', frequent);
    return loose && loose !== strict ? this.search(userId, loose, { ...options, ranked }) : hits;
  }

  countBy(
    userId: string,
    groupBy: GroupBy,
    filter?: DocumentFilter,
  ): Array<{ group: string; count: number }> {
    return countBy(this.db, userId, groupBy, filter);
  }

  collectionStats(userId: string, filter?: DocumentFilter): CollectionStats {
    return collectionStats(this.db, userId, filter);
  }

  /** Chunks by id (for vector hits), the caller's only, in the order asked. */
  hitsForChunks(userId: string, chunkIds: number[]): SearchHit[] {
    if (!chunkIds.length) return [];
    const rows = this.db
      .prepare(
        `SELECT c.id, c.document_id, c.page, c.start, c.end, c.text, d.title, d.filename, d.type
         FROM chunks c JOIN documents d ON d.id = c.document_id
         WHERE c.user_id = ? AND c.id IN (${chunkIds.map(() => '?').join(', ')})`,
      )
      .all(userId, ...chunkIds);
    const byId = new Map(rows.map((row) => [Number(row.id), row]));
    return chunkIds.flatMap((id) => {
      const row = byId.get(id);
      return row ? [toHit(row, excerpt(String(row.text)), 0)] : [];
    });
  }

  /** Stores embedding vectors for chunks of one of the caller's documents. */
  putVectors(
    userId: string,
    documentId: string,
    model: string,
    rows: Array<{ chunkId: number; vector: number[] }>,
  ) {
    transaction(this.db, () => {
      const insert = this.#statement(
        'INSERT OR REPLACE INTO chunk_vectors (chunk_id, user_id, document_id, model, vector) VALUES (?, ?, ?, ?, ?)',
      );
      for (const row of rows) {
        const blob = new Uint8Array(new Float32Array(row.vector).buffer);
        insert.run(row.chunkId, userId, documentId, model, blob);
      }
    });
  }

  /** The caller's vectors for one embedding model, narrowed by a filter. */
  vectors(
    userId: string,
    model: string,
    filter?: DocumentFilter,
  ): Array<{ chunkId: number; vector: Float32Array }> {
    const { sql, params } = filterConditions(filter);
    const rows = this.db
      .prepare(
        `SELECT v.chunk_id, v.vector FROM chunk_vectors v JOIN documents d ON d.id = v.document_id
         WHERE ${['v.user_id = ?', 'v.model = ?', 'd.user_id = v.user_id', ...sql].join(' AND ')}`,
      )
      .all(userId, model, ...params);
    return rows.map((row) => {
      const bytes = row.vector as Uint8Array;
      const copy = bytes.slice();
      return { chunkId: Number(row.chunk_id), vector: new Float32Array(copy.buffer, 0, copy.byteLength / 4) };
    });
  }

  #statement(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }
}

/** Lower-cased, trimmed, de-duplicated tags. */
export function normalizeTags(tags: string[]): string[] {
  return [...new Set(tags.map((tag) => tag.trim().toLowerCase()).filter(Boolean))];
}

type Row = Record<string, SQLInputValue>;

function toRecord(row: Row): DocumentRecord {
  return {
    id: String(row.id),
    userId: String(row.user_id),
    title: String(row.title),
    filename: String(row.filename),
    type: row.type as DocumentType,
    pages: Number(row.pages),
    size: Number(row.size),
    chars: Number(row.chars),
    hash: String(row.hash),
    tags: JSON.parse(String(row.tags)) as string[],
    addedAt: Number(row.added_at),
  };
}

function toChunk(row: Row): StoredChunk {
  return {
    id: Number(row.id),
    documentId: String(row.document_id),
    seq: Number(row.seq),
    page: Number(row.page),
    start: Number(row.start),
    end: Number(row.end),
    text: String(row.text),
  };
}

function toHit(row: Row, snippet: string, score: number): SearchHit {
  return {
    chunkId: Number(row.id),
    documentId: String(row.document_id),
    title: String(row.title),
    filename: String(row.filename),
    type: row.type as DocumentType,
    page: Number(row.page),
    start: Number(row.start),
    end: Number(row.end),
    snippet,
    text: String(row.text),
    score,
  };
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat;
}
