import { Unzip, UnzipInflate, UnzipPassThrough } from 'fflate';
import type { ParseBudget } from './parse-budget.ts';

/** Compressed bytes handed to the inflater at a time: deflate expands at most ~1032×, so ≤ 17 MB per push. */
const INPUT_CHUNK_BYTES = 16 * 1024;

/**
 * The wanted files of a ZIP archive, unpacked as a stream whose real output is counted against `budget`
 * (the sizes an archive declares are not trusted: they can lie). Stops at the limit with ParseLimitError.
 */
export function unzipBounded(
  bytes: Uint8Array,
  wanted: (name: string) => boolean,
  budget: ParseBudget,
): Record<string, Uint8Array> {
  const parts = new Map<string, Uint8Array[]>();
  let failure: unknown;
  const unzip = new Unzip((file) => {
    if (!wanted(file.name)) return;
    const chunks: Uint8Array[] = [];
    parts.set(file.name, chunks);
    file.ondata = (error, data) => {
      if (failure) return;
      if (error) {
        failure = error;
        return;
      }
      try {
        budget.unpacked(data.length, 'the workbook');
        chunks.push(data);
      } catch (limit) {
        failure = limit;
        file.terminate();
      }
    };
    file.start();
  });
  unzip.register(UnzipInflate);
  unzip.register(UnzipPassThrough);
  for (let offset = 0; offset < bytes.length && !failure; offset += INPUT_CHUNK_BYTES) {
    const end = Math.min(offset + INPUT_CHUNK_BYTES, bytes.length);
    unzip.push(bytes.subarray(offset, end), end === bytes.length);
  }
  if (failure) throw failure;
  return Object.fromEntries([...parts].map(([name, chunks]) => [name, concat(chunks)]));
}

function concat(chunks: Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const total = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}
