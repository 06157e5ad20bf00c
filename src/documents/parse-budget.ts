/**
 * What a parser may produce, counted while it produces it: a hostile file (a CSV padded to its widest row,
 * a ZIP that unpacks a thousandfold, a compressed PDF stream) is stopped at the limit, not after it has
 * been built in memory. Parsers run in a worker (parse-in-worker.ts); this is the budget they spend.
 */
export interface ParseLimits {
  /** Characters of extracted text, all pages together. */
  maxTextChars: number;
  maxPages: number;
  /** Bytes a compressed container (XLSX parts, PDF streams) may unpack to, all together. */
  maxUnpackedBytes: number;
}

/** A limit a file went past while being read; `limit` names the setting. */
export class ParseLimitError extends Error {
  readonly limit: keyof ParseLimits;
  constructor(limit: keyof ParseLimits, message: string) {
    super(message);
    this.name = 'ParseLimitError';
    this.limit = limit;
  }
}

/** Counts produced text and unpacked bytes against the limits; throws ParseLimitError past either. */
export class ParseBudget {
  readonly limits: ParseLimits;
  #chars = 0;
  #unpacked = 0;

  constructor(limits: ParseLimits) {
    this.limits = limits;
  }

  /** Spends `count` characters of output. */
  text(count: number, what = 'the text'): void {
    this.#chars += count;
    if (this.#chars > this.limits.maxTextChars) {
      throw new ParseLimitError(
        'maxTextChars',
        `${what} comes to more than the limit of ${this.limits.maxTextChars.toLocaleString('en')} characters (stopped there)`,
      );
    }
  }

  /** Spends `count` bytes of decompressed data. */
  unpacked(count: number, what = 'the compressed data'): void {
    this.#unpacked += count;
    if (this.#unpacked > this.limits.maxUnpackedBytes) {
      throw new ParseLimitError(
        'maxUnpackedBytes',
        `${what} unpacks to more than the limit of ${formatMegabytes(this.limits.maxUnpackedBytes)} (stopped there)`,
      );
    }
  }
}

function formatMegabytes(bytes: number): string {
  return `${Math.round((bytes / 1024 / 1024) * 10) / 10} MB`;
}
