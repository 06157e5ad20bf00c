import { resolve } from 'node:path';
import { UserError } from '../core/errors.ts';
import {
  formatBytes,
  type IngestInput,
  type IngestLimits,
  type IngestProgress,
  ingestDocument,
  ingestFile,
} from '../documents/ingest.ts';
import { searchDocuments } from '../documents/search.ts';
import { DOCUMENT_TYPES, type DocumentType } from '../documents/types.ts';
import { describeDocument } from '../tools/documents/filter-input.ts';
import type { CadreParts } from './cadre-parts.ts';

export { formatBytes, type IngestProgress };

/** A document as every front door shows it (the same shape the document tools give models). */
export type DocumentView = ReturnType<typeof describeDocument>;

export interface AddedDocument extends DocumentView {
  /** True when the caller already had these exact bytes; the document is that earlier one. */
  duplicate: boolean;
}

/** Types as people write them (the file extension, as `cadre docs search --help` shows) by stored name. */
const TYPE_ALIASES: Record<string, DocumentType> = { md: 'markdown', txt: 'text', htm: 'html' };

export interface DocumentSearchRequest {
  query: string;
  limit?: number;
  /** Document types, e.g. `['pdf']`. */
  types?: string[];
  tags?: string[];
  documentIds?: string[];
}

export interface DocumentSearchResult {
  documentId: string;
  title: string;
  filename: string;
  type: DocumentType;
  page: number;
  offset: number;
  snippet: string;
  score: number;
}

export interface AddOptions {
  onProgress?: (progress: IngestProgress) => void;
  signal?: AbortSignal;
}

/** A user's documents: add (bytes or a file), list, search, remove. Scoped to the caller throughout. */
export class DocumentsUseCases {
  #parts: CadreParts;

  constructor(parts: CadreParts) {
    this.#parts = parts;
  }

  /** The configured document limits (config `documents`), over the built-in defaults. */
  #limits(): Partial<IngestLimits> {
    const configured = this.#parts.config.documents ?? {};
    const megabytes = (value: number | undefined) =>
      value === undefined ? undefined : Math.round(value * 1024 * 1024);
    const limits: Partial<IngestLimits> = {
      maxFileBytes: megabytes(configured.maxFileMegabytes),
      maxTextChars: configured.maxTextChars,
      maxPages: configured.maxPages,
      maxUnpackedBytes: megabytes(configured.maxUnpackedMegabytes),
      parseTimeoutMs:
        configured.parseTimeoutSeconds === undefined ? undefined : configured.parseTimeoutSeconds * 1000,
      parseMemoryMb: configured.parseMemoryMb,
    };
    return Object.fromEntries(Object.entries(limits).filter(([, value]) => value !== undefined));
  }

  /** Adds uploaded bytes (the server's multipart upload). */
  async add(userId: string, input: IngestInput, options: AddOptions = {}): Promise<AddedDocument> {
    const { document, duplicate } = await ingestDocument(this.#parts.store.documents, userId, input, {
      ...options,
      limits: this.#limits(),
    });
    if (!duplicate) await this.#parts.userChanged(userId);
    return { ...describeDocument(document), duplicate };
  }

  /** Adds a file from disk; a relative path is read from `cwd`. */
  async addFile(
    userId: string,
    path: string,
    options: AddOptions & { cwd?: string; tags?: string[] } = {},
  ): Promise<AddedDocument> {
    const { cwd, ...rest } = options;
    const { document, duplicate } = await ingestFile(
      this.#parts.store.documents,
      userId,
      cwd ? resolve(cwd, path) : path,
      { ...rest, limits: this.#limits() },
    );
    if (!duplicate) await this.#parts.userChanged(userId);
    return { ...describeDocument(document), duplicate };
  }

  async list(userId: string): Promise<DocumentView[]> {
    return (await this.#parts.store.documents.list(userId)).map(describeDocument);
  }

  /** Keyword search (BM25) over the caller's documents, best first. */
  async search(userId: string, request: DocumentSearchRequest): Promise<DocumentSearchResult[]> {
    const query = request.query.trim();
    if (!query) throw new UserError('usage', 'A document search needs a query.');
    const limit = request.limit ?? 10;
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
      throw new UserError('usage', `limit must be a whole number from 1 to 100 (got "${request.limit}")`);
    }
    const types = request.types?.map((type) => {
      const name = type.trim().toLowerCase();
      return TYPE_ALIASES[name] ?? name;
    });
    const unknown = types?.find((type) => !DOCUMENT_TYPES.includes(type as DocumentType));
    if (unknown) {
      throw new UserError('usage', `type "${unknown}" is not one of ${DOCUMENT_TYPES.join(', ')}`);
    }
    const hits = await searchDocuments(this.#parts.store.documents, userId, query, {
      limit,
      filter: {
        ...(types ? { types: types as DocumentType[] } : {}),
        ...(request.tags?.length ? { tags: request.tags } : {}),
        ...(request.documentIds?.length ? { documentIds: request.documentIds } : {}),
      },
    });
    return hits.map((hit) => ({
      documentId: hit.documentId,
      title: hit.title,
      filename: hit.filename,
      type: hit.type,
      page: hit.page,
      offset: hit.start,
      snippet: hit.snippet,
      score: hit.score,
    }));
  }

  /** Removes one of the caller's documents; `UserError('unknown_document')` when they have none by that id. */
  async remove(userId: string, documentId: string): Promise<DocumentView> {
    const documents = this.#parts.store.documents;
    const document = await documents.get(userId, documentId);
    if (!document || !(await documents.remove(userId, documentId))) {
      throw new UserError('unknown_document', `There is no document "${documentId}" (see cadre docs list).`, {
        documentId,
      });
    }
    await this.#parts.userChanged(userId);
    return describeDocument(document);
  }
}
