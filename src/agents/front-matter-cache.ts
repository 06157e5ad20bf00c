import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { getCompileCacheDir } from 'node:module';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';

/** The most entries kept; the oldest go first. */
const MAX_ENTRIES = 512;

/**
 * Parsed front matter by the text it was parsed from, kept in a JSON file beside Node's compile cache
 * (where `cadre` keeps its compiled modules): every command reads the same agent definitions, and parsing
 * them is the only reason a command loads the YAML parser. Keyed by a hash of the YAML text itself, so an
 * edited file is a new key and never a stale hit. Only values that JSON keeps exactly are kept. A missing,
 * unreadable or corrupt file is an empty cache; failing to write one is not an error.
 */
export class FrontMatterCache {
  readonly #file: string | undefined;
  #entries: Map<string, Record<string, unknown>> | undefined;

  constructor(file: string | undefined) {
    this.#file = file;
  }

  /** The cache in Node's compile cache folder, or one kept in memory only when that is off. */
  static besideCompileCache(): FrontMatterCache {
    const folder = getCompileCacheDir();
    return new FrontMatterCache(folder ? join(folder, 'cadre-front-matter-1.json') : undefined);
  }

  get(yamlText: string): Record<string, unknown> | undefined {
    const value = this.#read().get(keyOf(yamlText));
    // A copy: callers may change what they are given.
    return value === undefined ? undefined : structuredClone(value);
  }

  set(yamlText: string, attributes: Record<string, unknown>): void {
    let copy: unknown;
    try {
      copy = JSON.parse(JSON.stringify(attributes));
    } catch {
      return;
    }
    if (!isDeepStrictEqual(copy, attributes)) return;
    const entries = this.#read();
    entries.set(keyOf(yamlText), copy as Record<string, unknown>);
    while (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value!);
    this.#write(entries);
  }

  #read(): Map<string, Record<string, unknown>> {
    if (this.#entries) return this.#entries;
    this.#entries = new Map();
    if (!this.#file) return this.#entries;
    try {
      const stored = JSON.parse(readFileSync(this.#file, 'utf8')) as unknown;
      if (stored && typeof stored === 'object' && !Array.isArray(stored))
        for (const [key, value] of Object.entries(stored))
          if (value && typeof value === 'object' && !Array.isArray(value))
            this.#entries.set(key, value as Record<string, unknown>);
    } catch {
      // No cache yet, or one this version cannot read: parse again.
    }
    return this.#entries;
  }

  #write(entries: Map<string, Record<string, unknown>>): void {
    if (!this.#file) return;
    // Whole or not at all: another command may read it at the same moment.
    const partial = `${this.#file}.${process.pid}.tmp`;
    try {
      writeFileSync(partial, JSON.stringify(Object.fromEntries(entries)));
      renameSync(partial, this.#file);
    } catch {
      // A read-only or full disk: the next command parses again.
    }
  }
}

const keyOf = (yamlText: string) => createHash('sha256').update(yamlText).digest('base64url');
