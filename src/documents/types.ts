/** The kinds of file Cadre turns into searchable text. */
export const DOCUMENT_TYPES = ['pdf', 'markdown', 'html', 'text', 'csv', 'xlsx'] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

/** One stored document's metadata, as every reader of the store sees it. */
export interface DocumentRecord {
  id: string;
  userId: string;
  title: string;
  filename: string;
  type: DocumentType;
  /** Pages of a PDF, sheets of a workbook, 1 for everything else. */
  pages: number;
  /** Bytes of the original file. */
  size: number;
  /** Characters of extracted text. */
  chars: number;
  /** SHA-256 of the file's bytes, hex. */
  hash: string;
  tags: string[];
  /** Milliseconds since the epoch. */
  addedAt: number;
}

/** A slice of a document's text; a document's chunks, in order, are its whole text. */
export interface ChunkInput {
  page: number;
  /** Offset of the first character in the document's whole text. */
  start: number;
  text: string;
}

export interface StoredChunk extends ChunkInput {
  id: number;
  documentId: string;
  seq: number;
  end: number;
}

export interface NewDocument {
  id: string;
  title: string;
  filename: string;
  type: DocumentType;
  pages: number;
  size: number;
  hash: string;
  tags: string[];
  addedAt: number;
  chunks: ChunkInput[];
}

/** Narrows a search or a listing; every field is optional and they combine with AND. */
export interface DocumentFilter {
  documentIds?: string[];
  types?: DocumentType[];
  /** Documents carrying any of these tags. */
  tags?: string[];
  /** Added at or after (ms since the epoch). */
  addedAfter?: number;
  /** Added before (ms since the epoch). */
  addedBefore?: number;
  titleContains?: string;
}

/** One matching chunk, with where it is and why it matched. */
export interface SearchHit {
  chunkId: number;
  documentId: string;
  title: string;
  filename: string;
  type: DocumentType;
  page: number;
  start: number;
  end: number;
  /** The matching passage with the matched terms in «», cut with … */
  snippet: string;
  text: string;
  /** Higher is better. BM25 (sign flipped) for keyword search, fused rank score for hybrid search. */
  score: number;
}

export type DocumentOrder = 'added' | 'title' | 'size' | 'pages';

export interface ListOptions {
  filter?: DocumentFilter;
  orderBy?: DocumentOrder;
  descending?: boolean;
  limit?: number;
  offset?: number;
}

/** What document counts can be grouped by. */
export type GroupBy = 'type' | 'tag' | 'day' | 'month';

export interface CollectionStats {
  documents: number;
  pages: number;
  bytes: number;
  characters: number;
  chunks: number;
  byType: Record<string, number>;
  oldestAddedAt: number | null;
  newestAddedAt: number | null;
}
