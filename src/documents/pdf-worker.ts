/**
 * Runs in a worker thread: PDF parsing is CPU-bound and a hostile file can make it spin, so it runs where
 * the main thread can terminate it. PDF.js never compiles code from the file (`isEvalSupported: false`).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { extractText, getDocumentProxy } from 'unpdf';

const { bytes, maxPages } = workerData as { bytes: Uint8Array; maxPages: number };
try {
  const pdf = await getDocumentProxy(bytes, { isEvalSupported: false, verbosity: 0 });
  if (pdf.numPages > maxPages) {
    parentPort?.postMessage({ tooManyPages: pdf.numPages });
  } else {
    const { text } = await extractText(pdf, { mergePages: false });
    let title: string | undefined;
    try {
      const metadata = await pdf.getMetadata();
      const info = metadata.info as { Title?: unknown } | undefined;
      if (typeof info?.Title === 'string' && info.Title.trim()) title = info.Title.trim();
    } catch {
      // Metadata is optional; the filename stands in for a missing title.
    }
    parentPort?.postMessage({ pages: text, title });
  }
  await pdf.destroy();
} catch (error) {
  parentPort?.postMessage({ error: error instanceof Error ? error.message : String(error) });
}
