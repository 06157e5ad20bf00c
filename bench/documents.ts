/**
 * Documents benchmark: ingestion throughput (MB/s of extracted text through detect, parse, chunk and
 * FTS5 indexing into a WAL file database) and keyword-search latency p50/p95 at 10k and 100k chunks.
 * Goals: >= 5 MB/s; p95 <= 20 ms at 100k chunks. The corpus is generated (seeded, Zipf-distributed
 * vocabulary), spread over two users so every query is really scoped; queries mix common and rare
 * terms, pairs, phrases, prefixes and filters.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ingestDocument } from '../src/documents/ingest.ts';
import { searchDocuments } from '../src/documents/search.ts';
import type { DocumentFilter } from '../src/documents/types.ts';
import { openDatabase } from '../src/store/sqlite/database.ts';
import { SqliteDocumentStore as DocumentStore } from '../src/store/sqlite/documents/document-store.ts';

export interface DocumentsBenchOptions {
  /** Chunk counts at which search latency is measured, ascending. */
  checkpoints: number[];
  queries: number;
  /** Characters of text per generated document. */
  documentChars: number;
  seed: number;
}

export interface LatencyFigures {
  chunks: number;
  p50: number;
  p95: number;
  p99: number;
  queries: number;
}

export interface DocumentsBenchResult {
  ingest: { megabytes: number; seconds: number; mbPerSecond: number; documents: number; chunks: number };
  search: LatencyFigures[];
}

/** Top-ranked words of the generated vocabulary, standing in for English function words. */
const FUNCTION_WORDS = 100;

const DEFAULTS: DocumentsBenchOptions = {
  checkpoints: [10_000, 100_000],
  queries: 400,
  documentChars: 1_000_000,
  seed: 7,
};

/** Runs the benchmark in a temporary folder and returns its figures. */
export async function benchDocuments(
  options: Partial<DocumentsBenchOptions> = {},
): Promise<DocumentsBenchResult> {
  const settings = { ...DEFAULTS, ...options };
  const dir = mkdtempSync(join(tmpdir(), 'cadre-bench-docs-'));
  const db = openDatabase(join(dir, 'cadre.db'));
  db.prepare("INSERT INTO users (id, name, created_at) VALUES ('other', 'other', 0)").run();
  const store = new DocumentStore(db);
  const random = seeded(settings.seed);
  const words = vocabulary(30_000, random);
  const zipf = zipfSampler(words.length, random);
  const contentZipf = zipfSampler(words.length - FUNCTION_WORDS, random);
  const search: LatencyFigures[] = [];
  let ingestMs = 0;
  let bytes = 0;
  let documents = 0;
  let chunks = 0;
  try {
    for (const checkpoint of settings.checkpoints) {
      while (chunks < checkpoint) {
        const text = generateText(settings.documentChars, words, zipf, random);
        const userId = documents % 2 === 0 ? 'local' : 'other';
        const markdown = documents % 3 === 0;
        const input = {
          filename: `doc-${documents}.${markdown ? 'md' : 'txt'}`,
          bytes: new TextEncoder().encode(text),
          tags: [`tag${documents % 5}`],
        };
        const started = performance.now();
        const { document } = await ingestDocument(store, userId, input);
        ingestMs += performance.now() - started;
        bytes += input.bytes.byteLength;
        chunks += (
          db.prepare('SELECT count(*) AS n FROM chunks WHERE document_id = ?').get(document.id) as {
            n: number;
          }
        ).n;
        documents++;
      }
      search.push(await measureSearch(store, chunks, settings.queries, words, contentZipf, random));
    }
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const megabytes = bytes / 1024 / 1024;
  const seconds = ingestMs / 1000;
  return { ingest: { megabytes, seconds, mbPerSecond: megabytes / seconds, documents, chunks }, search };
}

async function measureSearch(
  store: DocumentStore,
  chunks: number,
  count: number,
  words: string[],
  zipf: () => number,
  random: () => number,
): Promise<LatencyFigures> {
  const queries = Array.from({ length: count + 20 }, (_, index) => makeQuery(index, words, zipf, random));
  const times: number[] = [];
  for (const [index, query] of queries.entries()) {
    const started = performance.now();
    await searchDocuments(store, 'local', query.text, {
      limit: 10,
      ...(query.filter ? { filter: query.filter } : {}),
    });
    const elapsed = performance.now() - started;
    if (index >= 20) times.push(elapsed);
    if (process.env.BENCH_SLOW && elapsed > Number(process.env.BENCH_SLOW)) {
      console.log(
        `  slow ${elapsed.toFixed(1)} ms: ${query.text}${query.filter ? ` ${JSON.stringify(query.filter)}` : ''}`,
      );
    }
  }
  times.sort((a, b) => a - b);
  const at = (quantile: number) => times[Math.min(times.length - 1, Math.floor(quantile * times.length))]!;
  return { chunks, p50: at(0.5), p95: at(0.95), p99: at(0.99), queries: times.length };
}

/**
 * A query like people and models type: one to three content words, some phrases, prefixes and filters,
 * and some with a function word in them ("the notice period"). The generated corpus is Zipfian like real
 * text, so its top ranks play the part of English function words: content words are drawn (Zipf again)
 * from ranks >= FUNCTION_WORDS, and every seventh query carries one function word.
 */
function makeQuery(index: number, words: string[], zipf: () => number, random: () => number) {
  const content = () => words[FUNCTION_WORDS + zipf()]!;
  const functionWord = () => words[Math.floor(random() * FUNCTION_WORDS)]!;
  const kind = index % 7;
  let text: string;
  if (kind === 0) text = content();
  else if (kind === 1) text = `${content()} ${content()}`;
  else if (kind === 2) text = `${content()} ${content()} ${content()}`;
  else if (kind === 3) text = `"${content()} ${content()}"`;
  else if (kind === 4) text = prefixOf(content());
  else if (kind === 5) text = `${content()} ${content()}`;
  else text = `${functionWord()} ${content()} ${content()}`;
  const filter: DocumentFilter | undefined =
    kind === 5 ? (random() < 0.5 ? { types: ['markdown'] } : { tags: ['tag2'] }) : undefined;
  return { text, filter };
}

function generateText(chars: number, words: string[], zipf: () => number, random: () => number): string {
  const parts: string[] = [];
  let length = 0;
  while (length < chars) {
    const sentences = 3 + Math.floor(random() * 4);
    let paragraph = '';
    for (let s = 0; s < sentences; s++) {
      const count = 8 + Math.floor(random() * 13);
      const sentence: string[] = [];
      for (let w = 0; w < count; w++) sentence.push(words[zipf()]!);
      const first = sentence[0]!;
      sentence[0] = first[0]!.toUpperCase() + first.slice(1);
      paragraph += `${sentence.join(' ')}. `;
    }
    parts.push(paragraph.trim());
    length += paragraph.length + 2;
  }
  return parts.join('\n\n');
}

/** Letters weighted by their frequency in English, so prefixes spread over the vocabulary as they do in real text. */
const LETTERS =
  'eeeeeeeeeeeetttttttttaaaaaaaaooooooooiiiiiiinnnnnnnsssssshhhhhhrrrrrrddddllllcccuuummwwffggyyppbbvkjxqz';

function vocabulary(size: number, random: () => number): string[] {
  const words = new Set<string>();
  while (words.size < size) {
    const length = 3 + Math.floor(random() * 5) + Math.floor(random() * 5);
    let word = '';
    for (let index = 0; index < length; index++) word += LETTERS[Math.floor(random() * LETTERS.length)];
    words.add(word);
  }
  return [...words];
}

/** Ranks drawn with probability proportional to 1/rank (Zipf, s = 1), by inverting the cumulative sum. */
function zipfSampler(size: number, random: () => number): () => number {
  const cumulative = new Float64Array(size);
  let total = 0;
  for (let rank = 0; rank < size; rank++) {
    total += 1 / (rank + 1);
    cumulative[rank] = total;
  }
  return () => {
    const target = random() * total;
    let low = 0;
    let high = size - 1;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (cumulative[middle]! < target) low = middle + 1;
      else high = middle;
    }
    return low;
  };
}

function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function printDocuments(result: DocumentsBenchResult): void {
  const { ingest } = result;
  console.log('documents: ingest (detect, parse, chunk, FTS5 index; WAL file database)');
  console.log(
    `  ${ingest.megabytes.toFixed(1)} MB of text, ${ingest.documents} documents, ${ingest.chunks} chunks in ${ingest.seconds.toFixed(2)} s: ${ingest.mbPerSecond.toFixed(1)} MB/s (goal >= 5 MB/s)`,
  );
  console.log('documents: keyword search latency (BM25 + snippets, scoped to one user, limit 10)');
  for (const figures of result.search) {
    console.log(
      `  ${figures.chunks} chunks: p50 ${figures.p50.toFixed(2)} ms   p95 ${figures.p95.toFixed(2)} ms   p99 ${figures.p99.toFixed(2)} ms over ${figures.queries} queries (goal p95 <= 20 ms)`,
    );
  }
}

if (import.meta.main) {
  const checkpoints = process.env.BENCH_CHUNKS?.split(',').map(Number) ?? DEFAULTS.checkpoints;
  printDocuments(await benchDocuments({ checkpoints }));
}

/** A word stem as people type it for a prefix search ("invoic*" for "invoices"): all but its last two letters. */
function prefixOf(word: string): string {
  return `${word.slice(0, Math.max(4, word.length - 2))}*`;
}
