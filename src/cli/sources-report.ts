import type { Source } from '../core/index.ts';
import { printableLine } from './terminal-text.ts';

/**
 * An answer's cited links as lines for a terminal: each verified one (a tool in the tree returned it) with
 * a check, each unverified one (the model wrote it without any tool having returned it) flagged, so a
 * reader knows which links to check before trusting them. Empty when the answer cites nothing.
 */
export function sourcesReport(sources: readonly Source[] | undefined, indent = ''): string[] {
  if (!sources?.length) return [];
  const unverified = sources.filter((source) => !source.verified).length;
  const heading = unverified
    ? `Sources (${unverified} unverified: no tool in the run returned ${unverified === 1 ? 'it' : 'them'}):`
    : 'Sources:';
  return [
    `${indent}${heading}`,
    ...sources.map((source) => {
      const mark = source.verified ? '✓' : '? unverified';
      const title = source.title ? `${printableLine(source.title)} — ` : '';
      return `${indent}  ${mark} ${title}${printableLine(source.url)}`;
    }),
  ];
}
