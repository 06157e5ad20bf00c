import type { StatementSync } from 'node:sqlite';
import type { DocumentStore } from '../../../documents/document-store.ts';
import type {
  CollectionStats,
  DocumentFilter,
  DocumentOrder,
  DocumentRecord,
  GroupBy,
  ListOptions,
  NewDocument,
  SearchHit,
  StoredChunk,
} from '../../../documents/types.ts';
import { documentRecord, normalizeTags, storedChunk } from '../../document-rows.ts';
import { type Database, transaction } from '../database.ts';
import { allocateSlot, reserveChunkIds } from './chunk-ids.ts';
import { collectionStats, countBy } from './collection-queries.ts';
import { DocumentSearch, statementCache } from './document-search.ts';
import { filterConditions } from './filter-sql.ts';
import { createUserIndex, indexForSlot, userIndex } from './user-index.ts';

const ORDER_COLUMNS: Record<DocumentOrder, string> = {
  added: 'd.added_at',
  title: 'd.title COLLATE NOCASE',
  size: 'd.size',
  pages: 'd.pages',
};

/**
 * The document store: the catalogue (documents, tags, chunks, counts) here, search and vectors in
 * document-search.ts. Every method takes the caller's user id and every statement filters on it, so an id
 * that belongs to someone else behaves exactly like an id that does not exist. node:sqlite is synchronous,
 * so each method does its work at once and hands back a settled promise (the interface is async for
 * backends that are not); a multi-statement write is one SQLite transaction inside one call.
 */
export class SqliteDocumentStore implements DocumentStore {
  readonly db: Database;
  readonly #statements: (sql: string) => StatementSync;
  readonly #search: DocumentSearch;

  constructor(db: Database) {
    this.db = db;
    this.#statements = statementCache(db);
    this.#search = new DocumentSearch(db);
  }

  /** Stores a document with its tags and chunks in one transaction, indexing the chunks in the user's index. */
  async insert(userId: string, document: NewDocument): Promise<DocumentRecord> {
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

  async get(userId: string, id: string): Promise<DocumentRecord | undefined> {
    return this.#get(userId, id);
  }

  #get(userId: string, id: string): DocumentRecord | undefined {
    const row = this.#statement('SELECT * FROM documents WHERE id = ? AND user_id = ?').get(id, userId);
    return row ? documentRecord(row) : undefined;
  }

  async findByHash(userId: string, hash: string): Promise<DocumentRecord | undefined> {
    const row = this.#statement('SELECT * FROM documents WHERE hash = ? AND user_id = ?').get(hash, userId);
    return row ? documentRecord(row) : undefined;
  }

  async list(userId: string, options: ListOptions = {}): Promise<DocumentRecord[]> {
    const { sql, params } = filterConditions(options.filter);
    const order = ORDER_COLUMNS[options.orderBy ?? 'added'];
    const direction = (options.descending ?? true) ? 'DESC' : 'ASC';
    const rows = this.db
      .prepare(
        `SELECT d.* FROM documents d WHERE ${['d.user_id = ?', ...sql].join(' AND ')}
         ORDER BY ${order} ${direction}, d.id LIMIT ? OFFSET ?`,
      )
      .all(userId, ...params, options.limit ?? -1, options.offset ?? 0);
    return rows.map(documentRecord);
  }

  async count(userId: string, filter?: DocumentFilter): Promise<number> {
    const { sql, params } = filterConditions(filter);
    const row = this.db
      .prepare(`SELECT count(*) AS n FROM documents d WHERE ${['d.user_id = ?', ...sql].join(' AND ')}`)
      .get(userId, ...params) as { n: number };
    return row.n;
  }

  /** Removes a document and everything derived from it; false when the caller has no such document. */
  async remove(userId: string, id: string): Promise<boolean> {
    return transaction(this.db, () => {
      const index = userIndex(this.db, userId);
      if (!index || !this.#get(userId, id)) return false;
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
  async chunks(
    userId: string,
    documentId: string,
    range?: { from: number; to: number },
  ): Promise<StoredChunk[]> {
    const rows = range
      ? this.#statement(
          `SELECT * FROM chunks WHERE document_id = ? AND user_id = ? AND end > ? AND start < ? ORDER BY seq`,
        ).all(documentId, userId, range.from, range.to)
      : this.#statement('SELECT * FROM chunks WHERE document_id = ? AND user_id = ? ORDER BY seq').all(
          documentId,
          userId,
        );
    return rows.map(storedChunk);
  }

  /** Keyword search over an FTS5 expression (see document-search.ts); SQLite's own, synchronous, for tests. */
  search(
    userId: string,
    match: string,
    options: { filter?: DocumentFilter; limit?: number; ranked?: boolean } = {},
  ): SearchHit[] {
    return this.#search.search(userId, match, options);
  }

  /** Which of these words are in more than `share` of the caller's chunks (see document-search.ts); synchronous. */
  commonTerms(userId: string, words: string[], share?: number, minChunks?: number): Set<string> {
    return this.#search.commonTerms(userId, words, share, minChunks);
  }

  /** BM25 search for a person's query, all terms first, any term as the fallback. */
  async keywordSearch(
    userId: string,
    query: string,
    options: { limit: number; filter?: DocumentFilter },
  ): Promise<SearchHit[]> {
    return this.#search.keywordSearch(userId, query, options);
  }

  async countBy(
    userId: string,
    groupBy: GroupBy,
    filter?: DocumentFilter,
  ): Promise<Array<{ group: string; count: number }>> {
    return countBy(this.db, userId, groupBy, filter);
  }

  async collectionStats(userId: string, filter?: DocumentFilter): Promise<CollectionStats> {
    return collectionStats(this.db, userId, filter);
  }

  /** Chunks by id (for vector hits), the caller's only, in the order asked. */
  async hitsForChunks(userId: string, chunkIds: number[]): Promise<SearchHit[]> {
    return this.#search.hitsForChunks(userId, chunkIds);
  }

  /** Stores embedding vectors for chunks of one of the caller's documents. */
  async putVectors(
    userId: string,
    documentId: string,
    model: string,
    rows: Array<{ chunkId: number; vector: number[] }>,
  ): Promise<void> {
    this.#search.putVectors(userId, documentId, model, rows);
  }

  /** The caller's vectors for one embedding model, narrowed by a filter. */
  async vectors(
    userId: string,
    model: string,
    filter?: DocumentFilter,
  ): Promise<Array<{ chunkId: number; vector: Float32Array }>> {
    return this.#search.vectors(userId, model, filter);
  }

  #statement(sql: string): StatementSync {
    return this.#statements(sql);
  }
}
