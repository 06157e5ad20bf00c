const NUL = '\u0000';
const MARK = '\u0001';

/**
 * PostgreSQL text cannot hold the NUL character, which a person's message, a task or a document may
 * (SQLite keeps it). Text columns hold it escaped: NUL as \u0001 0 and \u0001 itself as \u0001 1, so
 * every string reads back exactly, and text without either character is stored as it is.
 */
export function toPgText(text: string): string {
  if (!text.includes(NUL) && !text.includes(MARK)) return text;
  return text.replaceAll(MARK, `${MARK}1`).replaceAll(NUL, `${MARK}0`);
}

/** The text `toPgText` stored. */
export function fromPgText(text: string): string {
  if (!text.includes(MARK)) return text;
  return text
    .split(MARK)
    .map((piece, index) => (index === 0 ? piece : (piece[0] === '0' ? NUL : MARK) + piece.slice(1)))
    .join('');
}

/** A row with the named text columns read back (see toPgText). */
export function decoded<T extends Record<string, unknown>>(row: T, columns: readonly string[]): T {
  const copy: Record<string, unknown> = { ...row };
  for (const column of columns) if (typeof copy[column] === 'string') copy[column] = fromPgText(copy[column]);
  return copy as T;
}
