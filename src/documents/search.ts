import type { DocumentStore } from './document-store.ts';
import { cosine, type Embedder, embedQuery } from './embeddings.ts';
import type { DocumentFilter, SearchHit } from './types.ts';

export interface SearchOptions {
  limit?: number;
  filter?: DocumentFilter;
  /** When set, keyword and vector results are fused by reciprocal rank. */
  embedder?: Embedder;
  signal?: AbortSignal;
}

/** The usual constant of reciprocal rank fusion: damps the difference between the very top ranks. */
const RRF_K = 60;
const CANDIDATES = 50;

/**
 * Searches the caller's documents. Keyword search first requires every term; when that finds nothing and
 * the query has several plain terms, any term will do (BM25 still ranks chunks with more terms higher).
 * With an embedder, the best vector matches are fused with the keyword ranking (RRF).
 */
export async function searchDocuments(
  store: DocumentStore,
  userId: string,
  query: string,
  options: SearchOptions = {},
): Promise<SearchHit[]> {
  const limit = options.limit ?? 10;
  const keyword = await keywordSearch(store, userId, query, {
    limit: options.embedder ? CANDIDATES : limit,
    ...(options.filter ? { filter: options.filter } : {}),
  });
  if (!options.embedder) return keyword;
  const vector = await vectorSearch(store, userId, query, options.embedder, options.filter, options.signal);
  return fuse(store, userId, keyword, vector, limit);
}

/** Keyword search through the store (its engine reads the query syntax), best BM25 first. */
export function keywordSearch(
  store: DocumentStore,
  userId: string,
  query: string,
  options: { limit: number; filter?: DocumentFilter },
): Promise<SearchHit[]> {
  return store.keywordSearch(userId, query, options);
}

async function vectorSearch(
  store: DocumentStore,
  userId: string,
  query: string,
  embedder: Embedder,
  filter: DocumentFilter | undefined,
  signal: AbortSignal | undefined,
): Promise<number[]> {
  const vectors = await store.vectors(userId, embedder.name, filter);
  if (!vectors.length) return [];
  const queryVector = await embedQuery(embedder, query, signal);
  return vectors
    .map((entry) => ({ chunkId: entry.chunkId, similarity: cosine(queryVector, entry.vector) }))
    .sort((a, b) => b.similarity - a.similarity)
    .slice(0, CANDIDATES)
    .map((entry) => entry.chunkId);
}

/** Reciprocal rank fusion: score = Σ 1 / (k + rank) over the rankings a chunk appears in. */
export function reciprocalRankFusion(
  rankings: number[][],
  k = RRF_K,
): Array<{ chunkId: number; score: number }> {
  const scores = new Map<number, number>();
  for (const ranking of rankings) {
    for (const [rank, chunkId] of ranking.entries()) {
      scores.set(chunkId, (scores.get(chunkId) ?? 0) + 1 / (k + rank + 1));
    }
  }
  return [...scores.entries()]
    .map(([chunkId, score]) => ({ chunkId, score }))
    .sort((a, b) => b.score - a.score || a.chunkId - b.chunkId);
}

async function fuse(
  store: DocumentStore,
  userId: string,
  keyword: SearchHit[],
  vector: number[],
  limit: number,
): Promise<SearchHit[]> {
  const fused = reciprocalRankFusion([keyword.map((hit) => hit.chunkId), vector]).slice(0, limit);
  const known = new Map(keyword.map((hit) => [hit.chunkId, hit]));
  const missing = await store.hitsForChunks(
    userId,
    fused.filter((entry) => !known.has(entry.chunkId)).map((entry) => entry.chunkId),
  );
  for (const hit of missing) known.set(hit.chunkId, hit);
  return fused.flatMap((entry) => {
    const hit = known.get(entry.chunkId);
    return hit ? [{ ...hit, score: entry.score }] : [];
  });
}
