export {
  DEFAULT_DOCUMENT_CONTEXT_CHARS,
  type DocumentContextOptions,
  documentContext,
  documentContextProvider,
  documentsInstructionFragment,
  hasDocuments,
} from './agent-context.ts';
export { type Embedder, embedChunks, embedQuery } from './embeddings.ts';
export { DocumentParseError, DocumentRejectedError } from './errors.ts';
export {
  DEFAULT_INGEST_LIMITS,
  type IngestInput,
  type IngestLimits,
  type IngestOptions,
  type IngestProgress,
  type IngestResult,
  ingestDocument,
  ingestFile,
} from './ingest.ts';
export { reciprocalRankFusion, type SearchOptions, searchDocuments } from './search.ts';
