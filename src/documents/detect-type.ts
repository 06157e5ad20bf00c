import { extname } from 'node:path';
import { DocumentRejectedError } from './errors.ts';
import type { DocumentType } from './types.ts';

const BY_EXTENSION: Record<string, DocumentType> = {
  '.pdf': 'pdf',
  '.md': 'markdown',
  '.markdown': 'markdown',
  '.mdx': 'markdown',
  '.html': 'html',
  '.htm': 'html',
  '.xhtml': 'html',
  '.txt': 'text',
  '.text': 'text',
  '.log': 'text',
  '.rst': 'text',
  '.csv': 'csv',
  '.tsv': 'csv',
  '.xlsx': 'xlsx',
};

const BY_MIME: Record<string, DocumentType> = {
  'application/pdf': 'pdf',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'text/plain': 'text',
  'text/csv': 'csv',
  'text/tab-separated-values': 'csv',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
};

const TEXT_TYPES = new Set<DocumentType>(['markdown', 'html', 'text', 'csv']);

/** What the bytes themselves say they are, from their first bytes. */
export function sniff(bytes: Uint8Array): 'pdf' | 'zip' | 'binary' | 'text' {
  const head = new TextDecoder('latin1').decode(bytes.subarray(0, 1024));
  if (head.trimStart().startsWith('%PDF-')) return 'pdf';
  if (head.startsWith('PK\u0003\u0004')) return 'zip';
  const sample = bytes.subarray(0, 8192);
  if (sample.includes(0)) return 'binary';
  return 'text';
}

/**
 * The document type for a file: from its extension, else its MIME type, else its content. Then the
 * content must agree with that type: a PDF renamed `.txt`, or a text file named `.pdf`, is refused with a
 * message saying what the file really looks like.
 */
export function detectType(filename: string, bytes: Uint8Array, mimeType?: string): DocumentType {
  const extension = extname(filename).toLowerCase();
  const declared =
    BY_EXTENSION[extension] ?? (mimeType ? BY_MIME[mimeType.split(';')[0]!.trim()] : undefined);
  const content = sniff(bytes);
  if (!declared) {
    if (content === 'pdf') return 'pdf';
    if (content === 'zip') return 'xlsx';
    if (content === 'text') return 'text';
    throw new DocumentRejectedError(
      'unsupported_type',
      `${filename}: unsupported file type${extension ? ` "${extension}"` : ''}. Cadre reads PDF, Markdown, HTML, plain text, CSV and XLSX.`,
      { filename },
    );
  }
  const mismatch = (what: string) =>
    new DocumentRejectedError(
      'content_mismatch',
      `${filename}: the name says ${describe(declared)} but the content is ${what}. Rename the file to match its content, or check that it is not damaged.`,
      { filename, declared, content },
    );
  if (declared === 'pdf' && content !== 'pdf') return throwing(mismatch(describeContent(content)));
  if (declared === 'xlsx' && content !== 'zip') return throwing(mismatch(describeContent(content)));
  if (TEXT_TYPES.has(declared) && content !== 'text') return throwing(mismatch(describeContent(content)));
  return declared;
}

/** Decodes text content as UTF-8 (a BOM is dropped), refusing bytes that are not valid UTF-8. */
export function decodeText(filename: string, bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new DocumentRejectedError(
      'content_mismatch',
      `${filename}: the content is not valid UTF-8 text. Save it as UTF-8 and add it again.`,
      { filename },
    );
  }
}

function describe(type: DocumentType): string {
  return {
    pdf: 'a PDF',
    markdown: 'Markdown',
    html: 'HTML',
    text: 'plain text',
    csv: 'CSV',
    xlsx: 'an XLSX workbook',
  }[type];
}

function describeContent(content: ReturnType<typeof sniff>): string {
  return {
    pdf: 'a PDF',
    zip: 'a ZIP archive (such as an XLSX or DOCX file)',
    binary: 'binary data',
    text: 'plain text',
  }[content];
}

function throwing(error: Error): never {
  throw error;
}
