import { Unzlib } from 'fflate';
import type { ParseBudget } from './parse-budget.ts';

const INPUT_CHUNK_BYTES = 16 * 1024;
/** How far back from `stream` its dictionary (with the /Filter) may start. */
const DICTIONARY_WINDOW = 4 * 1024;

/**
 * Inflates every Flate-compressed stream of a PDF as a stream, counting its real output against `budget`
 * and keeping none of it, before PDF.js reads the file. PDF.js decodes a stream whole into one growing
 * buffer (outside the worker's heap limit), so a 300 KB compression bomb took 2.4 GB; this finds it for
 * the price of one pass and stops at the limit. A stream that does not inflate is left for PDF.js to judge.
 */
export function checkPdfStreams(bytes: Uint8Array, budget: ParseBudget): void {
  const text = new TextDecoder('latin1').decode(bytes);
  let from = 0;
  for (;;) {
    const keyword = text.indexOf('stream', from);
    if (keyword === -1) return;
    from = keyword + 6;
    if (text.startsWith('end', keyword - 3)) continue;
    let start = keyword + 6;
    if (text[start] === '\r') start++;
    if (text[start] !== '\n') continue;
    start++;
    const dictionary = text.slice(Math.max(0, keyword - DICTIONARY_WINDOW), keyword);
    const open = dictionary.lastIndexOf('<<');
    if (open === -1 || !/\/(FlateDecode|Fl)\b/.test(dictionary.slice(open))) continue;
    const end = text.indexOf('endstream', start);
    const stop = end === -1 ? bytes.length : end;
    inflateCounted(bytes.subarray(start, stop), budget);
    from = stop;
  }
}

function inflateCounted(data: Uint8Array, budget: ParseBudget): void {
  let limit: unknown;
  const inflater = new Unzlib((chunk) => {
    if (limit) return;
    try {
      budget.unpacked(chunk.length, 'a compressed stream in the PDF');
    } catch (error) {
      limit = error;
    }
  });
  try {
    for (let offset = 0; offset < data.length && !limit; offset += INPUT_CHUNK_BYTES) {
      const end = Math.min(offset + INPUT_CHUNK_BYTES, data.length);
      inflater.push(data.subarray(offset, end), end === data.length);
    }
  } catch {
    // Not valid zlib data (or cut short): PDF.js decides what that means for the page.
  }
  if (limit) throw limit;
}
