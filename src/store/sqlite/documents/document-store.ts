import type { StatementSync } from 'node:sqlite';
import type { DocumentStore } from '../../../documents/document-store.ts';
import type { DocumentFilter, DocumentRecord, NewDocument, SearchHit } from '../../../documents/types.ts';
import { normalizeTags } from '../../document-rows.ts';
import { SqlDocumentCatalogue } from '../../sql/document-catalogue.ts';
import { type Database, transaction } from '../database.ts';
import { SqliteSqlDatabase } from '../sql-port.ts';
import { allocateSlot, reserveChunkIds } from './chunk-ids.ts';
import { DocumentSearch, statementCache } from './document-search.ts';
import { createUserIndex, indexForSlot, userIndex } from './user-index.ts';

/**
 * The SQLite document store: the catalogue both backends read alike (sql/document-catalogue.ts), writes
 * that keep each user's FTS5 index (user-index.ts) in step here, search and vectors in document-search.ts. Every method takes the caller's user id and every statement filters on it, so an id
 * that belongs to someone else behaves exactly like an id that does not exist. node:sqlite is synchronous,
 * so each method does its work at once and hands back a settled promise (the interface is async for
 * backends that are not); a multi-statement write is one SQLite transaction inside one call.
 */
export class SqliteDocumentStore extends SqlDocumentCatalogue implements DocumentStore {
  readonly db: Database;
  readonly #statements: (sql: string) => StatementSync;
  readonly #search: DocumentSearch;

  constructor(db: Database) {
    super(new SqliteSqlDatabase(db));
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

  #owns(userId: string, id: string): boolean {
    return (
      this.#statement('SELECT 1 FROM documents WHERE id = ? AND user_id = ?').get(id, userId) !== undefined
    );
  }

  /** Removes a document and everything derived from it; false when the caller has no such document. */
  async remove(userId: string, id: string): Promise<boolean> {
    return transaction(this.db, () => {
      const index = userIndex(this.db, userId);
      if (!index || !this.#owns(userId, id)) return false;
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
