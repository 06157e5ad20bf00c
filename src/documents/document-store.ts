import type {
  CollectionStats,
  DocumentFilter,
  DocumentRecord,
  GroupBy,
  ListOptions,
  NewDocument,
  SearchHit,
  StoredChunk,
} from './types.ts';

/**
 * The documents a user has, as the document domain needs them: ingest, the document tools and the
 * agents' context reach storage only through this interface (the SQLite implementation lives in
 * `store/documents/`). Every method takes the caller's user id, and an id that belongs to someone else
 * behaves exactly like an id that does not exist. Unlike the other stores it answers synchronously: the
 * embedded engine does, and search ranks thousands of rows per query in one call.
 */
export interface DocumentStore {
  /** Stores a document with its tags and chunks, indexed for search. */
  insert(userId: string, document: NewDocument): DocumentRecord;
  get(userId: string, id: string): DocumentRecord | undefined;
  findByHash(userId: string, hash: string): DocumentRecord | undefined;
  list(userId: string, options?: ListOptions): DocumentRecord[];
  count(userId: string, filter?: DocumentFilter): number;
  /** Removes a document and everything derived from it; false when the caller has no such document. */
  remove(userId: string, id: string): boolean;
  /** A document's chunks in order, optionally only those overlapping [from, to). */
  chunks(userId: string, documentId: string, range?: { from: number; to: number }): StoredChunk[];
  /**
   * Keyword search (BM25) for a person's query: every term first, any term when that finds nothing;
   * the query syntax (quotes, OR, prefix*) is the engine's to interpret.
   */
  keywordSearch(
    userId: string,
    query: string,
    options: { limit: number; filter?: DocumentFilter },
  ): SearchHit[];
  /** Chunks by id (for vector hits), the caller's only, in the order asked. */
  hitsForChunks(userId: string, chunkIds: number[]): SearchHit[];
  putVectors(
    userId: string,
    documentId: string,
    model: string,
    rows: Array<{ chunkId: number; vector: number[] }>,
  ): void;
  vectors(
    userId: string,
    model: string,
    filter?: DocumentFilter,
  ): Array<{ chunkId: number; vector: Float32Array }>;
  /** Document counts per group (type, tag, day or month added), largest group first. */
  countBy(userId: string, groupBy: GroupBy, filter?: DocumentFilter): Array<{ group: string; count: number }>;
  /** Totals over the caller's documents that match a filter. */
  collectionStats(userId: string, filter?: DocumentFilter): CollectionStats;
}
