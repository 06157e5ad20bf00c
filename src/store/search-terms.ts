/**
 * What a person or a model types into a document search, read the same way for every backend: "quoted
 * phrases", prefix* terms, OR between terms, -excluded terms, and plain words. Each backend turns the
 * parts into its engine's own query (FTS5 MATCH, PostgreSQL tsquery) without passing typed syntax through.
 */
export type Part =
  | { kind: 'term'; text: string; prefix: boolean }
  | { kind: 'phrase'; text: string }
  | { kind: 'or' };

/** A word as the search engines' tokenizers see one: letters, digits and underscores. */
export const WORD = /[\p{L}\p{N}_]+/gu;

/** True when the query asks for something the fallback to `any` would change (phrases, OR, exclusions). */
export function hasOperators(query: string): boolean {
  const { parts, excluded } = tokenize(query);
  return excluded.length > 0 || parts.some((part) => part.kind !== 'term');
}

/** The query's parts in order, and the phrases or words to exclude. */
export function tokenize(query: string): { parts: Part[]; excluded: string[] } {
  const parts: Part[] = [];
  const excluded: string[] = [];
  const pattern = /(-?)"([^"]*)"?|(\S+)/g;
  for (const match of query.matchAll(pattern)) {
    const [, minus, phrase, bare] = match;
    if (phrase !== undefined) {
      const words = phrase.match(WORD) ?? [];
      if (!words.length) continue;
      if (minus) excluded.push(words.join(' '));
      else parts.push(words.length > 1 ? { kind: 'phrase', text: words.join(' ') } : term(words[0]!, false));
      continue;
    }
    if (!bare) continue;
    if (bare === 'OR' || bare === '|') {
      parts.push({ kind: 'or' });
      continue;
    }
    if (bare === 'AND') continue;
    const words = bare.match(WORD) ?? [];
    if (!words.length) continue;
    const prefix = bare.endsWith('*');
    if (bare.startsWith('-') && bare.length > 1) {
      excluded.push(words.join(' '));
      continue;
    }
    // "e-mail", "v2.1" and the like: the tokenizer splits them, so search them as a phrase.
    if (words.length > 1) parts.push({ kind: 'phrase', text: words.join(' ') });
    else parts.push(term(words[0]!, prefix));
  }
  return { parts, excluded };
}

function term(text: string, prefix: boolean): Part {
  return { kind: 'term', text, prefix };
}
