// Turns what a person or a model types into a safe FTS5 MATCH expression. Nothing typed reaches FTS5's
// own syntax unquoted, so stray quotes, colons or parentheses can never make a query fail or reach a
// column filter. Understood: "quoted phrases", prefix* terms, OR between terms, and -excluded terms.
import { type Part, tokenize } from '../../search-terms.ts';

/** `all`: every term must match (AND); `any`: one is enough (OR), BM25 ranks those with more higher. */
export type MatchMode = 'all' | 'any';

/** The MATCH expression for `query`, or undefined when it holds nothing searchable. */
export function toMatchExpression(
  query: string,
  mode: MatchMode = 'all',
  common: ReadonlySet<string> = new Set(),
): string | undefined {
  const { parts, excluded } = withoutCommonTerms(tokenize(query), common);
  const positive: string[] = [];
  let joinNextWithOr = false;
  for (const part of parts) {
    if (part.kind === 'or') {
      joinNextWithOr = positive.length > 0;
      continue;
    }
    const expression =
      part.kind === 'phrase' ? quote(part.text) : `${quote(part.text)}${part.prefix ? '*' : ''}`;
    if (joinNextWithOr && positive.length) positive.push(`OR ${expression}`);
    else positive.push(positive.length ? `${mode === 'all' ? 'AND' : 'OR'} ${expression}` : expression);
    joinNextWithOr = false;
  }
  if (!positive.length) return undefined;
  const head = positive.length > 1 ? `(${positive.join(' ')})` : positive[0]!;
  return excluded.length ? `${head} NOT (${excluded.map(quote).join(' OR ')})` : head;
}

/** The plain words of a query (not phrases, prefixes or exclusions): candidates for `commonTerms`. */
export function plainTerms(query: string): string[] {
  return tokenize(query).parts.flatMap((part) =>
    part.kind === 'term' && !part.prefix ? [part.text.toLowerCase()] : [],
  );
}

/** True when every searchable part of the query is one of the common words (so BM25 cannot rank it). */
export function onlyCommonTerms(query: string, common: ReadonlySet<string>): boolean {
  const positive = tokenize(query).parts.filter((part) => part.kind !== 'or');
  return (
    positive.length > 0 &&
    positive.every((part) => part.kind === 'term' && !part.prefix && common.has(part.text.toLowerCase()))
  );
}

/** Drops common plain words, unless nothing else would be left to search for. */
function withoutCommonTerms(tokens: { parts: Part[]; excluded: string[] }, common: ReadonlySet<string>) {
  if (!common.size) return tokens;
  const isCommon = (part: Part) =>
    part.kind === 'term' && !part.prefix && common.has(part.text.toLowerCase());
  const kept = tokens.parts.filter((part) => !isCommon(part));
  return kept.some((part) => part.kind !== 'or') ? { parts: kept, excluded: tokens.excluded } : tokens;
}

function quote(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}
