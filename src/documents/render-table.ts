/** Rows between repeats of the header, so a chunk cut from the middle of a table still says what its columns are. */
const HEADER_EVERY = 25;

/**
 * A table as a Markdown pipe table, the form models read most reliably. The first non-empty row is the
 * header; it is repeated every few rows. Pipes and newlines inside cells are escaped.
 */
export function renderTable(rows: string[][], heading?: string): string {
  const nonEmpty = rows.filter((row) => row.some((cell) => cell.trim() !== ''));
  const lines: string[] = heading ? [`## ${heading}`, ''] : [];
  if (!nonEmpty.length) return [...lines, '(empty)'].join('\n');
  const width = Math.max(...nonEmpty.map((row) => row.length));
  const line = (row: string[]) =>
    `| ${Array.from({ length: width }, (_, index) => cell(row[index] ?? '')).join(' | ')} |`;
  const [header, ...body] = nonEmpty as [string[], ...string[][]];
  const headerLines = [line(header), `|${' --- |'.repeat(width)}`];
  lines.push(`${plural(body.length, 'row')}, ${plural(width, 'column')}`, '', ...headerLines);
  for (const [index, row] of body.entries()) {
    if (index > 0 && index % HEADER_EVERY === 0) lines.push('', ...headerLines);
    lines.push(line(row));
  }
  return lines.join('\n');
}

function cell(value: string): string {
  return value.replace(/\r?\n/g, ' ').replaceAll('|', '\\|').trim();
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
