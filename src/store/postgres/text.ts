/**
 * PostgreSQL text cannot hold the NUL character, which a person's message, a task or a document may
 * (SQLite keeps it). Text columns hold it escaped: NUL as \u0001 0 and \u0001 itself as \u0001 1, so
 * every string reads back exactly, and text without either character is stored as it is.
 */
export function toPgText(text: string): string {
  return /[\u0000\u0001]/.test(text)
    ? text.replace(/[\u0000\u0001]/g, (c) => (c === '\u0000' ? '\u00010' : '\u00011'))
    : text;
}

/** The text `toPgText` stored. */
export function fromPgText(text: string): string {
  return text.includes('\u0001')
    ? text.replace(/\u0001([01])/g, (_, c) => (c === '0' ? '\u0000' : '\u0001'))
    : text;
}

/** A row with the named text columns read back (see toPgText). */
export function decoded<T extends Record<string, unknown>>(row: T, columns: readonly string[]): T {
  const copy: Record<string, unknown> = { ...row };
  for (const column of columns) if (typeof copy[column] === 'string') copy[column] = fromPgText(copy[column]);
  return copy as T;
}
