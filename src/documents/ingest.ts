import { createHash, randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { chunkPages } from './chunk-text.ts';
import { detectType } from './detect-type.ts';
import type { DocumentStore } from './document-store.ts';
import { type Embedder, embedChunks } from './embeddings.ts';
import { DocumentRejectedError } from './errors.ts';
import { parseInWorker } from './parse-in-worker.ts';
import type { DocumentRecord } from './types.ts';

export interface IngestLimits {
  /** Largest file accepted, in bytes. */
  maxFileBytes: number;
  /** Most characters of extracted text accepted for one document. */
  maxTextChars: number;
  maxPages: number;
  /** Bytes a compressed file (XLSX parts, PDF streams) may unpack to, counted as it unpacks. */
  maxUnpackedBytes: number;
  /** Wall-clock cap on reading one file (any format); the parser is stopped past it. */
  parseTimeoutMs: number;
  /** Memory cap on reading one file, heap and buffers, in megabytes. */
  parseMemoryMb: number;
}

/** The defaults, also listed in the README ("Document size limits"). */
export const DEFAULT_INGEST_LIMITS: IngestLimits = {
  maxFileBytes: 50 * 1024 * 1024,
  maxTextChars: 20_000_000,
  maxPages: 5_000,
  maxUnpackedBytes: 100 * 1024 * 1024,
  parseTimeoutMs: 60_000,
  parseMemoryMb: 1_024,
};

export interface IngestInput {
  filename: string;
  bytes: Uint8Array;
  tags?: string[];
  /** Overrides the title found in the file (or its name). */
  title?: string;
  /** The upload's declared MIME type, used when the name has no known extension. */
  mimeType?: string;
}

export interface IngestProgress {
  filename: string;
  phase: 'reading' | 'parsing' | 'indexing' | 'embedding' | 'done';
  /** Units done and total in this phase (bytes for reading, chunks for indexing); 0/0 when unknown. */
  done: number;
  total: number;
}

export interface IngestOptions {
  limits?: Partial<IngestLimits>;
  onProgress?: (progress: IngestProgress) => void;
  /** Vectors for hybrid search are computed and stored when given. */
  embedder?: Embedder;
  signal?: AbortSignal;
  now?: () => number;
  newId?: () => string;
}

export interface IngestResult {
  document: DocumentRecord;
  /** True when the same bytes were already in the caller's collection; `document` is that one. */
  duplicate: boolean;
}

/**
 * Adds one file to a user's collection: checks its size and that its content matches its type, extracts
 * its text (PDF in a time-capped worker), cuts it into positioned chunks and stores them in FTS5. The
 * same bytes added twice by the same user give back the first document. The CLI and the server both call
 * this.
 */
export async function ingestDocument(
  store: DocumentStore,
  userId: string,
  input: IngestInput,
  options: IngestOptions = {},
): Promise<IngestResult> {
  const limits = { ...DEFAULT_INGEST_LIMITS, ...options.limits };
  const { filename, bytes } = input;
  const progress = (phase: IngestProgress['phase'], done = 0, total = 0) =>
    options.onProgress?.({ filename, phase, done, total });
  checkSize(filename, bytes.byteLength, limits);
  const hash = createHash('sha256').update(bytes).digest('hex');
  const existing = await store.findByHash(userId, hash);
  if (existing) return { document: existing, duplicate: true };

  const type = detectType(filename, bytes, input.mimeType);
  progress('parsing');
  // Every format in a worker with time and memory caps, its output counted against the limits as it is made.
  const parsed = await parseInWorker(type, filename, bytes, limits, options.signal);
  const chars = parsed.pages.reduce((total, page) => total + page.length, 0);
  if (!parsed.pages.some((page) => page.trim())) {
    throw new DocumentRejectedError(
      'empty',
      `${filename}: no text could be extracted${type === 'pdf' ? ' (a scanned PDF needs OCR, which Cadre does not do)' : ''}.`,
      { filename },
    );
  }
  if (chars > limits.maxTextChars) {
    throw new DocumentRejectedError(
      'too_large',
      `${filename}: ${chars.toLocaleString('en')} characters of text is more than the limit of ${limits.maxTextChars.toLocaleString('en')}.`,
      { filename },
    );
  }
  if (parsed.pages.length > limits.maxPages) {
    throw new DocumentRejectedError(
      'too_large',
      `${filename}: ${parsed.pages.length} pages is more than the limit of ${limits.maxPages}.`,
      { filename },
    );
  }
  options.signal?.throwIfAborted();

  const chunks = chunkPages(parsed.pages);
  progress('indexing', 0, chunks.length);
  let document: DocumentRecord;
  try {
    document = await store.insert(userId, {
      id: (options.newId ?? newDocumentId)(),
      title: (input.title ?? parsed.title ?? stem(filename)).slice(0, 500),
      filename: basename(filename),
      type,
      pages: parsed.pages.length,
      size: bytes.byteLength,
      hash,
      tags: input.tags ?? [],
      addedAt: (options.now ?? Date.now)(),
      chunks,
    });
  } catch (error) {
    // The same bytes added twice at once (two uploads, two processes) both pass the check above; the
    // store keeps one document per user and hash, so the later insert fails and gets the earlier one.
    const added = await store.findByHash(userId, hash);
    if (added) return { document: added, duplicate: true };
    throw error;
  }
  progress('indexing', chunks.length, chunks.length);
  if (options.embedder) {
    progress('embedding', 0, chunks.length);
    try {
      await embedChunks(
        store,
        userId,
        document.id,
        await store.chunks(userId, document.id),
        options.embedder,
        options.signal,
      );
    } catch (error) {
      // Keyword search works without vectors; a document half-embedded would rank unevenly, so undo it whole.
      await store.remove(userId, document.id);
      throw error;
    }
  }
  progress('done', chunks.length, chunks.length);
  return { document, duplicate: false };
}

/** Reads a file from disk (refusing it by size before reading) and ingests it. */
export async function ingestFile(
  store: DocumentStore,
  userId: string,
  path: string,
  options: IngestOptions & { tags?: string[]; title?: string } = {},
): Promise<IngestResult> {
  const limits = { ...DEFAULT_INGEST_LIMITS, ...options.limits };
  const filename = basename(path);
  const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
    throw new DocumentRejectedError(
      'not_found',
      error.code === 'ENOENT' ? `${path}: no such file.` : `${path}: ${error.message}`,
      { path },
    );
  });
  if (!info.isFile()) throw new DocumentRejectedError('not_a_file', `${path}: not a regular file.`, { path });
  checkSize(filename, info.size, limits);
  options.onProgress?.({ filename, phase: 'reading', done: 0, total: info.size });
  const bytes = new Uint8Array(await readFile(path, options.signal ? { signal: options.signal } : {}));
  options.onProgress?.({ filename, phase: 'reading', done: info.size, total: info.size });
  return ingestDocument(
    store,
    userId,
    {
      filename,
      bytes,
      ...(options.tags ? { tags: options.tags } : {}),
      ...(options.title ? { title: options.title } : {}),
    },
    options,
  );
}

function checkSize(filename: string, size: number, limits: IngestLimits): void {
  if (size === 0) throw new DocumentRejectedError('empty', `${filename}: the file is empty.`, { filename });
  if (size > limits.maxFileBytes) {
    throw new DocumentRejectedError(
      'too_large',
      `${filename}: ${formatBytes(size)} is more than the limit of ${formatBytes(limits.maxFileBytes)}.`,
      { filename, size },
    );
  }
}

/** Human-readable size: 512 B, 14.2 KB, 3.1 MB. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function stem(filename: string): string {
  const name = basename(filename);
  return name.slice(0, name.length - extname(name).length) || name;
}

function newDocumentId(): string {
  return `doc_${randomBytes(9).toString('base64url')}`;
}
