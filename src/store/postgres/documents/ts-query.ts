import { tokenize } from '../../search-terms.ts';
import type { Params } from '../database.ts';

/** `all`: every term must match; `any`: one is enough, and chunks with more rank higher. */
export type MatchMode = 'all' | 'any';

/**
 * A tsquery expression for what a person typed (see search-terms.ts), its words passed as values, never
 * as tsquery syntax: a word goes through `plainto_tsquery` (stemmed like the chunks' `tsvector`), a phrase
 * through `phraseto_tsquery`, a prefix as a `simple` lexeme with `:*`. Undefined when nothing is
 * searchable.
 */
export function toTsQuery(query: string, mode: MatchMode, params: Params): string | undefined {
  const { parts, excluded } = tokenize(query);
  let expression = '';
  let joinNextWithOr = false;
  for (const part of parts) {
    if (part.kind === 'or') {
      joinNextWithOr = expression !== '';
      continue;
    }
    const value =
      part.kind === 'phrase'
        ? `phraseto_tsquery('english', ${params.add(part.text)})`
        : part.prefix
          ? `to_tsquery('simple', ${params.add(`${part.text.toLowerCase()}:*`)})`
          : `plainto_tsquery('english', ${params.add(part.text)})`;
    const operator = joinNextWithOr || mode === 'any' ? '||' : '&&';
    expression = expression ? `(${expression} ${operator} ${value})` : value;
    joinNextWithOr = false;
  }
  if (!expression) return undefined;
  if (!excluded.length) return expression;
  const unwanted = excluded.map((text) => `phraseto_tsquery('english', ${params.add(text)})`).join(' || ');
  return `(${expression} && !!(${unwanted}))`;
}
