import type { Embedder } from '../../documents/embeddings.ts';

export interface DocumentToolOptions {
  /** Turns on hybrid search (keyword + vectors, fused by reciprocal rank). Off by default. */
  embedder?: Embedder;
  /** Clock for "added in the last N days"; injected by tests. */
  now?: () => number;
}
