/**
 * Runs in a worker thread, one per document: every format is parsed here, where the host can cap the
 * heap, watch external memory (decompression buffers) and terminate on time. Parsers count their output
 * against a ParseBudget and stop at its limits; the reply says which limit, if any, was hit.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { CadreError } from '../core/errors.ts';
import { decodeText } from './detect-type.ts';
import { ParseBudget, ParseLimitError, type ParseLimits } from './parse-budget.ts';
import { parseMarkdown, parsePlainText } from './parse-text.ts';
import type { ParsedDocument } from './parsed-document.ts';
import type { DocumentType } from './types.ts';

export interface ParseJob {
  type: DocumentType;
  filename: string;
  bytes: Uint8Array;
  limits: ParseLimits;
}

export type ParseReply =
  | { ok: true; parsed: ParsedDocument }
  | { ok: false; kind: 'limit'; limit: keyof ParseLimits; message: string }
  | { ok: false; kind: 'rejected'; code: string; message: string }
  | { ok: false; kind: 'failed'; message: string };

async function parse(job: ParseJob, budget: ParseBudget): Promise<ParsedDocument> {
  const { type, filename, bytes } = job;
  // Each worker parses one file: it loads only that format's parser (the PDF one alone is megabytes), so a
  // Markdown or text file is read without booting pdf.js, linkedom or the zip reader.
  if (type === 'pdf') return (await import('./parse-pdf.ts')).parsePdf(bytes, budget);
  if (type === 'xlsx') return (await import('./parse-xlsx.ts')).parseXlsx(filename, bytes, budget);
  const text = decodeText(filename, bytes);
  if (type === 'html') {
    const parsed = (await import('./parse-html.ts')).parseHtml(text);
    for (const page of parsed.pages) budget.text(page.length, 'the page text');
    return parsed;
  }
  // Plain text, Markdown and CSV give back at least as many characters as they read: check first.
  if (text.length > job.limits.maxTextChars) {
    throw new ParseLimitError(
      'maxTextChars',
      `${text.length.toLocaleString('en')} characters of text is more than the limit of ${job.limits.maxTextChars.toLocaleString('en')}`,
    );
  }
  if (type === 'csv') return (await import('./parse-csv.ts')).parseCsv(text, filename, budget);
  return type === 'markdown' ? parseMarkdown(text) : parsePlainText(text);
}

async function run(job: ParseJob): Promise<ParseReply> {
  try {
    return { ok: true, parsed: await parse(job, new ParseBudget(job.limits)) };
  } catch (error) {
    if (error instanceof ParseLimitError)
      return { ok: false, kind: 'limit', limit: error.limit, message: error.message };
    if (CadreError.isInstance(error))
      return { ok: false, kind: 'rejected', code: error.code, message: error.message };
    return { ok: false, kind: 'failed', message: error instanceof Error ? error.message : String(error) };
  }
}

parentPort?.postMessage(await run(workerData as ParseJob));
