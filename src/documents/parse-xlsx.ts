import { XMLParser } from 'fast-xml-parser';
import { strFromU8 } from 'fflate';
import { DocumentRejectedError } from './errors.ts';
import { type ParseBudget, ParseLimitError } from './parse-budget.ts';
import type { ParsedDocument } from './parsed-document.ts';
import { renderTable } from './render-table.ts';
import { unzipBounded } from './unzip-bounded.ts';

/** Built-in Excel number formats that are dates or times. */
const DATE_FORMAT_IDS = new Set([14, 15, 16, 17, 18, 19, 20, 21, 22, 45, 46, 47]);

const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  isArray: (name) => ['sheet', 'Relationship', 'si', 'r', 'row', 'c', 'xf', 'numFmt'].includes(name),
});

/**
 * An XLSX workbook as one Markdown table per sheet (each sheet counts as a page). Reads the OOXML parts
 * directly: the workbook's sheet list, shared strings, cell styles (to show dates as dates) and sheets.
 */
export function parseXlsx(filename: string, bytes: Uint8Array, budget: ParseBudget): ParsedDocument {
  let files: Record<string, Uint8Array>;
  try {
    // Unpacked as a stream and counted as it comes: the sizes an archive declares can lie.
    files = unzipBounded(
      bytes,
      (name) =>
        (name.startsWith('xl/') || name === 'docProps/core.xml') &&
        (name.endsWith('.xml') || name.endsWith('.rels')),
      budget,
    );
  } catch (error) {
    if (error instanceof ParseLimitError) throw error;
    throw new DocumentRejectedError(
      'unreadable',
      `${filename}: not a readable XLSX workbook (${(error as Error).message}).`,
    );
  }
  const read = (name: string) => (files[name] ? xml.parse(strFromU8(files[name])) : undefined);
  const workbook = read('xl/workbook.xml');
  if (!workbook?.workbook) {
    throw new DocumentRejectedError(
      'content_mismatch',
      `${filename}: a ZIP archive, but not an XLSX workbook (no xl/workbook.xml).`,
    );
  }
  const relations = new Map<string, string>(
    (read('xl/_rels/workbook.xml.rels')?.Relationships?.Relationship ?? []).map((rel: any) => [
      rel.Id,
      rel.Target,
    ]),
  );
  const shared = (read('xl/sharedStrings.xml')?.sst?.si ?? []).map(richText);
  const dateStyles = dateStyleIndexes(read('xl/styles.xml'));
  const sheets: any[] = workbook.workbook.sheets?.sheet ?? [];
  const pages = sheets.map((sheet) => {
    const target = relations.get(sheet.id) ?? '';
    const path = target.startsWith('/') ? target.slice(1) : `xl/${target.replace(/^\.\//, '')}`;
    const rows = sheetRows(read(path), shared, dateStyles, budget);
    return renderTable(rows, `Sheet: ${sheet.name}`, budget);
  });
  const title = read('docProps/core.xml')?.coreProperties?.title;
  return { ...(typeof title === 'string' && title.trim() ? { title: title.trim() } : {}), pages };
}

function sheetRows(sheet: any, shared: string[], dateStyles: Set<number>, budget: ParseBudget): string[][] {
  const rows: string[][] = [];
  for (const row of sheet?.worksheet?.sheetData?.row ?? []) {
    const cells: string[] = [];
    for (const cell of row.c ?? []) {
      const column = cell.r ? columnIndex(cell.r) : cells.length;
      // A cell at XFD1048576 pads its row (and the table) with empty cells: each costs output, so count it.
      if (column > cells.length) budget.text(column - cells.length, 'the sheet');
      while (cells.length < column) cells.push('');
      cells[column] = cellValue(cell, shared, dateStyles);
    }
    const index = row.r ? Number(row.r) - 1 : rows.length;
    // Empty rows are dropped when the table is drawn; skipping to row 1,000,000 must not allocate them all.
    if (index > rows.length) budget.text(index - rows.length, 'the sheet');
    while (rows.length < index) rows.push([]);
    rows[index] = cells;
  }
  return rows;
}

function cellValue(cell: any, shared: string[], dateStyles: Set<number>): string {
  const raw = textOf(cell.v);
  switch (cell.t) {
    case 's':
      return shared[Number(raw)] ?? '';
    case 'inlineStr':
      return richText(cell.is);
    case 'b':
      return raw === '1' ? 'TRUE' : 'FALSE';
    case 'str':
    case 'e':
      return raw;
    default:
      if (raw !== '' && dateStyles.has(Number(cell.s ?? -1))) return serialToDate(Number(raw));
      return raw;
  }
}

function dateStyleIndexes(styles: any): Set<number> {
  const custom = new Map<number, string>(
    (styles?.styleSheet?.numFmts?.numFmt ?? []).map((format: any) => [
      Number(format.numFmtId),
      String(format.formatCode),
    ]),
  );
  const indexes = new Set<number>();
  for (const [index, xf] of (styles?.styleSheet?.cellXfs?.xf ?? []).entries()) {
    const id = Number(xf.numFmtId ?? 0);
    const code = custom.get(id)?.replace(/"[^"]*"|\[[^\]]*\]/g, '');
    if (DATE_FORMAT_IDS.has(id) || (code && /[dy]/i.test(code))) indexes.add(index);
  }
  return indexes;
}

function serialToDate(serial: number): string {
  if (!Number.isFinite(serial)) return String(serial);
  const date = new Date(Math.round((serial - 25569) * 86_400_000));
  const iso = date.toISOString();
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.slice(0, 19).replace('T', ' ');
}

function columnIndex(reference: string): number {
  let index = 0;
  for (const char of reference) {
    const code = char.charCodeAt(0);
    if (code < 65 || code > 90) break;
    index = index * 26 + (code - 64);
  }
  return index - 1;
}

function richText(node: any): string {
  if (node === undefined || node === null) return '';
  if (typeof node !== 'object') return String(node);
  if (node.t !== undefined) return textOf(node.t);
  return (node.r ?? []).map((run: any) => textOf(run.t)).join('');
}

function textOf(value: any): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') return String(value['#text'] ?? '');
  return String(value);
}
