import type { DocumentRecord, DocumentType, SearchHit, StoredChunk } from '../documents/types.ts';

// The rows of the document tables as the domain's objects, the same for every backend (their column
// names are the same in each); values are converted, as drivers hand numbers back in different types.

/** A row of any backend's driver: column name to value. */
type Row = Record<string, unknown>;

/** Lower-cased, trimmed, de-duplicated tags. */
export function normalizeTags(tags: string[]): string[] {
  return [...new Set(tags.map((tag) => tag.trim().toLowerCase()).filter(Boolean))];
}

export function documentRecord(row: Row): DocumentRecord {
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

export function storedChunk(row: Row): StoredChunk {
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

/** A chunk row joined with its document's title, filename and type, as a hit. */
export function searchHit(row: Row, snippet: string, score: number): SearchHit {
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

/** The start of a chunk's text, for a hit found by its vector (no matched words to show). */
export function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat;
}
