import type { ParseBudget } from './parse-budget.ts';

/** Rows between repeats of the header, so a chunk cut from the middle of a table still says what its columns are. */
const HEADER_EVERY = 25;

/**
 * A table as a Markdown pipe table, the form models read most reliably. The first non-empty row is the
 * header; it is repeated every few rows. Pipes and newlines inside cells are escaped. Every row is padded
 * to the widest, so a small file with one very wide row can ask for a huge table: the output is counted
 * against `budget` line by line and stops at its limit.
 */
export function renderTable(rows: string[][], heading?: string, budget?: ParseBudget): string {
  const nonEmpty = rows.filter((row) => row.some((cell) => cell.trim() !== ''));
  const lines: string[] = heading ? [`## ${heading}`, ''] : [];
  if (!nonEmpty.length) return [...lines, '(empty)'].join('\n');
  // A loop, not Math.max(...rows): spreading 500,000 rows as arguments overflows the stack.
  let width = 0;
  for (const row of nonEmpty) if (row.length > width) width = row.length;
  const push = (line: string) => {
    budget?.text(line.length + 1, 'the table');
    lines.push(line);
  };
  const line = (row: string[]) => {
    // Padding alone costs three characters a cell: refuse before building a line that cannot fit.
    budget?.text(width * 3, 'the table');
    const cells: string[] = [];
    for (let index = 0; index < width; index++) cells.push(cell(row[index] ?? ''));
    return `| ${cells.join(' | ')} |`;
  };
  const [header, ...body] = nonEmpty as [string[], ...string[][]];
  const headerLines = [line(header), `|${' --- |'.repeat(width)}`];
  lines.push(`${plural(body.length, 'row')}, ${plural(width, 'column')}`, '');
  for (const headerLine of headerLines) push(headerLine);
  for (const [index, row] of body.entries()) {
    if (index > 0 && index % HEADER_EVERY === 0) {
      push('');
      for (const headerLine of headerLines) push(headerLine);
    }
    push(line(row));
  }
  return lines.join('\n');
}

function cell(value: string): string {
  return value.replace(/\r?\n/g, ' ').replaceAll('|', '\\|').trim();
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
