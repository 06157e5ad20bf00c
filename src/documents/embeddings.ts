import { type EmbeddingModel, embed, embedMany } from 'ai';
import type { DocumentStore } from './document-store.ts';
import type { StoredChunk } from './types.ts';

/**
 * An embedding model for hybrid search. Off unless configured: keyword search alone needs no model and no
 * network. `name` keys the stored vectors, so switching models never mixes incomparable vectors.
 */
export interface Embedder {
  model: EmbeddingModel;
  name: string;
  /** Chunks per embedding request. */
  batchSize?: number;
}

/** Embeds a document's chunks and stores the vectors beside them. */
export async function embedChunks(
  store: DocumentStore,
  userId: string,
  documentId: string,
  chunks: StoredChunk[],
  embedder: Embedder,
  signal?: AbortSignal,
): Promise<void> {
  const batchSize = embedder.batchSize ?? 64;
  for (let index = 0; index < chunks.length; index += batchSize) {
    const batch = chunks.slice(index, index + batchSize);
    const { embeddings } = await embedMany({
      model: embedder.model,
      values: batch.map((chunk) => chunk.text),
      ...(signal ? { abortSignal: signal } : {}),
    });
    await store.putVectors(
      userId,
      documentId,
      embedder.name,
      batch.map((chunk, at) => ({ chunkId: chunk.id, vector: embeddings[at] ?? [] })),
    );
  }
}

export async function embedQuery(embedder: Embedder, query: string, signal?: AbortSignal): Promise<number[]> {
  const { embedding } = await embed({
    model: embedder.model,
    value: query,
    ...(signal ? { abortSignal: signal } : {}),
  });
  return embedding;
}

export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index++) {
    const x = a[index]!;
    const y = b[index]!;
    dot += x * y;
    normA += x * x;
    normB += y * y;
  }
  return normA && normB ? dot / Math.sqrt(normA * normB) : 0;
}
