import type { ParsedDocument } from './parsed-document.ts';
import { renderTable } from './render-table.ts';

/** Splits CSV (RFC 4180: quoted fields, doubled quotes, newlines inside quotes) with the given delimiter. */
export function splitCsv(text: string, delimiter: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (quoted) {
      if (char === '"') {
        if (text[index + 1] === '"') {
          field += '"';
          index++;
        } else quoted = false;
      } else field += char;
      continue;
    }
    if (char === '"' && field === '') quoted = true;
    else if (char === delimiter) {
      row.push(field);
      field = '';
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && text[index + 1] === '\n') index++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += char;
  }
  if (field !== '' || row.length) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

/** The delimiter of a CSV file: tab, semicolon or comma, whichever splits the first line most. */
export function guessDelimiter(text: string, filename = ''): string {
  if (filename.toLowerCase().endsWith('.tsv')) return '\t';
  const firstLine = text.slice(0, text.indexOf('\n') === -1 ? undefined : text.indexOf('\n'));
  const counts = [',', ';', '\t'].map((delimiter) => ({ delimiter, n: firstLine.split(delimiter).length }));
  counts.sort((a, b) => b.n - a.n);
  return counts[0]!.n > 1 ? counts[0]!.delimiter : ',';
}

/** A CSV file as one Markdown table. */
export function parseCsv(text: string, filename = ''): ParsedDocument {
  const body = text.replace(/^\uFEFF/, '');
  return { pages: [renderTable(splitCsv(body, guessDelimiter(body, filename)))] };
}
