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
 * agents' context reach storage only through this interface (implemented in `store/sqlite/documents/`).
 * Every method takes the caller's user id, and an id that belongs to someone else behaves exactly like an
 * id that does not exist. Every method answers with a promise, like the other
 * stores, so any backend can implement it: the embedded SQLite engine answers at once, a server database
 * (PostgreSQL) over the network. Work that must be atomic (storing a document with its tags, chunks and
 * index entries; removing one with everything derived from it) is one method, never a sequence of calls.
 */
export interface DocumentStore {
  /**
   * Stores a document with its tags and chunks, indexed for search, all or nothing. A user has one
   * document per content hash: a second insert with a hash they already have rejects and stores nothing.
   */
  insert(userId: string, document: NewDocument): Promise<DocumentRecord>;
  get(userId: string, id: string): Promise<DocumentRecord | undefined>;
  findByHash(userId: string, hash: string): Promise<DocumentRecord | undefined>;
  list(userId: string, options?: ListOptions): Promise<DocumentRecord[]>;
  count(userId: string, filter?: DocumentFilter): Promise<number>;
  /** Removes a document and everything derived from it; false when the caller has no such document. */
  remove(userId: string, id: string): Promise<boolean>;
  /** A document's chunks in order, optionally only those overlapping [from, to). */
  chunks(userId: string, documentId: string, range?: { from: number; to: number }): Promise<StoredChunk[]>;
  /**
   * Keyword search (BM25) for a person's query: every term first, any term when that finds nothing;
   * the query syntax (quotes, OR, prefix*) is the engine's to interpret. One call does the whole search
   * (both passes and the ranking of every candidate row) so a remote backend answers in one round trip.
   */
  keywordSearch(
    userId: string,
    query: string,
    options: { limit: number; filter?: DocumentFilter },
  ): Promise<SearchHit[]>;
  /** Chunks by id (for vector hits), the caller's only, in the order asked. */
  hitsForChunks(userId: string, chunkIds: number[]): Promise<SearchHit[]>;
  /** Stores (or replaces) embedding vectors for chunks of one of the caller's documents, all or nothing. */
  putVectors(
    userId: string,
    documentId: string,
    model: string,
    rows: Array<{ chunkId: number; vector: number[] }>,
  ): Promise<void>;
  /** The caller's vectors for one embedding model, narrowed by a filter. */
  vectors(
    userId: string,
    model: string,
    filter?: DocumentFilter,
  ): Promise<Array<{ chunkId: number; vector: Float32Array }>>;
  /** Document counts per group (type, tag, day or month added), largest group first. */
  countBy(
    userId: string,
    groupBy: GroupBy,
    filter?: DocumentFilter,
  ): Promise<Array<{ group: string; count: number }>>;
  /** Totals over the caller's documents that match a filter. */
  collectionStats(userId: string, filter?: DocumentFilter): Promise<CollectionStats>;
}
