import { getDocumentProxy } from 'unpdf';
import { type ParseBudget, ParseLimitError } from './parse-budget.ts';
import type { ParsedDocument } from './parsed-document.ts';
import { checkPdfStreams } from './pdf-streams.ts';

/**
 * A PDF's text page by page, with its title when the file names one. Runs inside the parse worker: first
 * every compressed stream is inflated once and counted (a compression bomb stops there), then PDF.js reads
 * the pages one at a time, their text counted as it comes. PDF.js never compiles code from the file
 * (`isEvalSupported: false`).
 */
export async function parsePdf(bytes: Uint8Array, budget: ParseBudget): Promise<ParsedDocument> {
  checkPdfStreams(bytes, budget);
  const pdf = await getDocumentProxy(bytes, { isEvalSupported: false, verbosity: 0 });
  try {
    if (pdf.numPages > budget.limits.maxPages) {
      throw new ParseLimitError(
        'maxPages',
        `${pdf.numPages.toLocaleString('en')} pages is more than the limit of ${budget.limits.maxPages.toLocaleString('en')}`,
      );
    }
    const pages: string[] = [];
    for (let number = 1; number <= pdf.numPages; number++) {
      const page = await pdf.getPage(number);
      const content = await page.getTextContent();
      let text = '';
      for (const item of content.items) {
        if (!('str' in item) || item.str == null) continue;
        const piece = item.str + (item.hasEOL ? '\n' : '');
        budget.text(piece.length, 'the PDF text');
        text += piece;
      }
      page.cleanup();
      pages.push(text);
    }
    let title: string | undefined;
    try {
      const metadata = await pdf.getMetadata();
      const info = metadata.info as { Title?: unknown } | undefined;
      if (typeof info?.Title === 'string' && info.Title.trim()) title = info.Title.trim();
    } catch {
      // Metadata is optional; the filename stands in for a missing title.
    }
    return { pages, ...(title ? { title } : {}) };
  } finally {
    await pdf.destroy();
  }
}
