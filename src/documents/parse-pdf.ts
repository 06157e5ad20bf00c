import { Worker } from 'node:worker_threads';
import { DocumentParseError, DocumentRejectedError } from './errors.ts';
import type { ParsedDocument } from './parsed-document.ts';

export interface PdfOptions {
  /** Wall-clock cap on parsing one file; the worker is terminated past it. */
  timeoutMs: number;
  maxPages: number;
  signal?: AbortSignal;
}

type WorkerReply = { pages: string[]; title?: string } | { error: string } | { tooManyPages: number };

/** Extracts a PDF's text page by page with unpdf, in a worker thread that is killed after `timeoutMs`. */
export function parsePdf(filename: string, bytes: Uint8Array, options: PdfOptions): Promise<ParsedDocument> {
  return new Promise((resolve, reject) => {
    const copy = bytes.slice();
    const worker = new Worker(new URL('./pdf-worker.ts', import.meta.url), {
      workerData: { bytes: copy, maxPages: options.maxPages },
      transferList: [copy.buffer],
      resourceLimits: { maxOldGenerationSizeMb: 1024 },
    });
    let settled = false;
    const settle = (action: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      void worker.terminate();
      action();
    };
    const timer = setTimeout(
      () =>
        settle(() =>
          reject(
            new DocumentParseError(
              'parse_timeout',
              `${filename}: reading the PDF took longer than ${options.timeoutMs < 1000 ? `${options.timeoutMs} ms` : `${Math.round(options.timeoutMs / 1000)} s`} and was stopped.`,
              { filename },
            ),
          ),
        ),
      options.timeoutMs,
    );
    const onAbort = () => settle(() => reject(options.signal?.reason ?? new Error('aborted')));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    worker.once('message', (reply: WorkerReply) =>
      settle(() => {
        if ('pages' in reply) resolve({ pages: reply.pages, ...(reply.title ? { title: reply.title } : {}) });
        else if ('tooManyPages' in reply)
          reject(
            new DocumentRejectedError(
              'too_large',
              `${filename}: ${reply.tooManyPages} pages is more than the limit of ${options.maxPages}.`,
              { filename },
            ),
          );
        else
          reject(
            new DocumentRejectedError('unreadable', `${filename}: not a readable PDF (${reply.error}).`, {
              filename,
            }),
          );
      }),
    );
    worker.once('error', (error) =>
      settle(() =>
        reject(
          new DocumentParseError(
            'parse_failed',
            `${filename}: the PDF reader failed: ${error.message}`,
            {},
            error,
          ),
        ),
      ),
    );
    worker.once('exit', (code) =>
      settle(() =>
        reject(
          new DocumentParseError('parse_failed', `${filename}: the PDF reader stopped (exit code ${code}).`),
        ),
      ),
    );
  });
}
