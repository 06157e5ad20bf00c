import { getCompileCacheDir } from 'node:module';
import { Worker } from 'node:worker_threads';
import { DocumentParseError, DocumentRejectedError } from './errors.ts';
import type { ParseLimits } from './parse-budget.ts';
import type { ParseJob, ParseReply } from './parse-worker.ts';
import type { ParsedDocument } from './parsed-document.ts';
import type { DocumentType } from './types.ts';

export interface WorkerParseLimits extends ParseLimits {
  /** Wall-clock time for one file; the worker is terminated past it. */
  parseTimeoutMs: number;
  /** Memory one file's parser may use, heap and buffers together, in megabytes. */
  parseMemoryMb: number;
}

/** The config key (under `documents`) that sets each parse limit, for error messages. */
const CONFIG_KEYS: Record<keyof ParseLimits, string> = {
  maxTextChars: 'maxTextChars',
  maxPages: 'maxPages',
  maxUnpackedBytes: 'maxUnpackedMegabytes',
};

/** How often the worker's memory (heap plus buffers outside it) is checked. */
const MEMORY_POLL_MS = 50;

/**
 * Parses one file in its own worker thread with a time limit and a memory limit, the parser counting its
 * output against the text, page and unpacked-size limits as it goes. The V8 heap cap alone misses typed
 * arrays (decompression buffers live outside the heap), so the host also polls the worker's external
 * memory and terminates it past the limit. Every way out is an error that names the limit: the process
 * and the other uploads go on.
 */
export function parseInWorker(
  type: DocumentType,
  filename: string,
  bytes: Uint8Array,
  limits: WorkerParseLimits,
  signal?: AbortSignal,
): Promise<ParsedDocument> {
  signal?.throwIfAborted();
  const copy = bytes.slice();
  const job: ParseJob = {
    type,
    filename,
    bytes: copy,
    limits: {
      maxTextChars: limits.maxTextChars,
      maxPages: limits.maxPages,
      maxUnpackedBytes: limits.maxUnpackedBytes,
    },
  };
  const compileCache = getCompileCacheDir();
  const worker = new Worker(new URL('./parse-worker.ts', import.meta.url), {
    workerData: job,
    transferList: [copy.buffer],
    // The host's compile cache: the worker's TypeScript is not stripped again (~80 ms of CPU per document).
    env: compileCache ? { NODE_COMPILE_CACHE: compileCache } : {},
    argv: [],
    execArgv: [],
    stdout: true,
    stderr: true,
    resourceLimits: {
      maxOldGenerationSizeMb: limits.parseMemoryMb,
      maxYoungGenerationSizeMb: 64,
      stackSizeMb: 8,
    },
  });
  const memoryError = () =>
    new DocumentRejectedError(
      'too_large',
      `${filename}: reading it needed more than ${limits.parseMemoryMb} MB of memory and was stopped (limit documents.parseMemoryMb in config).`,
      { filename, limit: 'parseMemoryMb' },
    );
  return new Promise<ParsedDocument>((resolve, reject) => {
    let settled = false;
    const settle = (action: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(poll);
      signal?.removeEventListener('abort', onAbort);
      void worker.terminate();
      action();
    };
    const timer = setTimeout(
      () =>
        settle(() =>
          reject(
            new DocumentParseError(
              'parse_timeout',
              `${filename}: reading the ${describe(type)} took longer than ${formatMs(limits.parseTimeoutMs)} and was stopped (limit documents.parseTimeoutSeconds in config).`,
              { filename, limit: 'parseTimeoutMs' },
            ),
          ),
        ),
      limits.parseTimeoutMs,
    );
    const maxBytes = limits.parseMemoryMb * 1024 * 1024;
    const poll = setInterval(() => {
      worker
        .getHeapStatistics()
        .then((stats) => {
          if (stats.used_heap_size + stats.external_memory > maxBytes) settle(() => reject(memoryError()));
        })
        .catch(() => undefined);
    }, MEMORY_POLL_MS);
    const onAbort = () => settle(() => reject(signal?.reason ?? new Error('aborted')));
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.once('message', (reply: ParseReply) =>
      settle(() => {
        if (reply.ok) resolve(reply.parsed);
        else if (reply.kind === 'limit')
          reject(
            new DocumentRejectedError(
              'too_large',
              `${filename}: ${reply.message} (limit documents.${CONFIG_KEYS[reply.limit]} in config).`,
              {
                filename,
                limit: reply.limit,
              },
            ),
          );
        else if (reply.kind === 'rejected')
          reject(new DocumentRejectedError(reply.code, reply.message, { filename }));
        else
          reject(
            new DocumentRejectedError(
              'unreadable',
              `${filename}: not a readable ${describe(type)} (${reply.message}).`,
              {
                filename,
              },
            ),
          );
      }),
    );
    worker.once('error', (error: Error & { code?: string }) =>
      settle(() =>
        reject(
          error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? memoryError()
            : new DocumentParseError(
                'parse_failed',
                `${filename}: the ${describe(type)} reader failed: ${error.message}`,
                {},
                error,
              ),
        ),
      ),
    );
    worker.once('exit', (code) =>
      settle(() =>
        reject(
          new DocumentParseError(
            'parse_failed',
            `${filename}: the ${describe(type)} reader stopped (exit code ${code}).`,
          ),
        ),
      ),
    );
  });
}

function describe(type: DocumentType): string {
  return {
    pdf: 'PDF',
    xlsx: 'XLSX workbook',
    csv: 'CSV file',
    html: 'HTML page',
    markdown: 'Markdown file',
    text: 'text file',
  }[type];
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}
