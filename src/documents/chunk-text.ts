import type { ChunkInput } from './types.ts';

export interface ChunkOptions {
  /** Longest chunk, in characters. */
  maxChars: number;
  /** Shortest chunk cut at a natural break; below it the cut falls at the hard limit instead. */
  minChars: number;
}

export const DEFAULT_CHUNKING: ChunkOptions = { maxChars: 1200, minChars: 400 };

/** Separates pages in a document's whole text. */
export const PAGE_SEPARATOR = '\n\n';

/**
 * Cuts a document's pages into contiguous chunks that never cross a page: joined in order they give back
 * the whole text exactly (pages separated by a blank line), so reading a range and citing a page need no
 * second copy of the text. Cuts prefer a paragraph break, then a line break, a sentence end, a space.
 */
export function chunkPages(pages: string[], options: ChunkOptions = DEFAULT_CHUNKING): ChunkInput[] {
  const chunks: ChunkInput[] = [];
  let offset = 0;
  for (const [index, page] of pages.entries()) {
    const text = index < pages.length - 1 ? `${page}${PAGE_SEPARATOR}` : page;
    let position = 0;
    while (position < text.length) {
      const end = cutPoint(text, position, options);
      chunks.push({ page: index + 1, start: offset + position, text: text.slice(position, end) });
      position = end;
    }
    offset += text.length;
  }
  return chunks;
}

function cutPoint(text: string, from: number, { maxChars, minChars }: ChunkOptions): number {
  const hardEnd = from + maxChars;
  if (text.length <= hardEnd) return text.length;
  const window = text.slice(from, hardEnd);
  for (const breaker of ['\n\n', '\n', '. ', '? ', '! ', '; ', ' ']) {
    const at = window.lastIndexOf(breaker);
    if (at >= minChars) return from + at + breaker.length;
  }
  // Do not split a UTF-16 surrogate pair.
  const code = text.charCodeAt(hardEnd - 1);
  return code >= 0xd800 && code <= 0xdbff ? hardEnd - 1 : hardEnd;
}
