import type { CadreTool } from '../../core/tool.ts';
import type { DocumentStore } from '../../documents/document-store.ts';
import type { DocumentToolOptions } from './options.ts';
import { queryDocumentsTool } from './query-documents.ts';
import { readDocumentTool } from './read-document.ts';
import { searchDocumentsTool } from './search-documents.ts';
import { searchWithinDocumentTool } from './search-within-document.ts';

export type { DocumentToolOptions } from './options.ts';

/** The documents family, over one open store; every call is scoped to the calling run's user. */
export function documentTools(store: DocumentStore, options: DocumentToolOptions = {}): CadreTool[] {
  return [
    searchDocumentsTool(store, options),
    readDocumentTool(store),
    queryDocumentsTool(store, options),
    searchWithinDocumentTool(store, options),
  ];
}
