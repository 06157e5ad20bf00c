import type { Source } from './envelope.ts';

const URL_PATTERN = /https?:\/\/[^\s<>"'`)\]}]+/g;
const MARKDOWN_LINK = /\[([^\]\n]{1,200})\]\((https?:\/\/[^\s)]+)\)/g;

/** Normalizes a URL for comparison: no fragment, no trailing slash or punctuation, lower-case host. */
export function normalizeUrl(raw: string): string {
  const trimmed = raw.replace(/[.,;:!?]+$/, '');
  try {
    const url = new URL(trimmed);
    url.hash = '';
    return url.toString().replace(/\/$/, '');
  } catch {
    return trimmed;
  }
}

/** Every http(s) URL found anywhere in a tool's output (strings nested in objects and arrays included). */
export function collectUrls(value: unknown, into: Set<string>, depth = 0): void {
  if (depth > 12 || value == null) return;
  if (typeof value === 'string') {
    // Most outputs have no link at all: a search for the scheme is much cheaper than the pattern.
    if (!value.includes('http')) return;
    for (const match of value.matchAll(URL_PATTERN)) into.add(normalizeUrl(match[0]));
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) collectUrls(item, into, depth + 1);
    return;
  }
  if (typeof value === 'object') {
    for (const item of Object.values(value)) collectUrls(item, into, depth + 1);
  }
}

/**
 * The URLs a tool call's output vouches for. A sub-agent's result envelope vouches only for its sources
 * marked verified (which its own tools, or its children's, returned): a link it wrote without having seen
 * it must not become verified one level up. Any other output vouches for every URL in it.
 */
export function collectOutputUrls(output: unknown, into: Set<string>): void {
  if (isEnvelopeLike(output)) {
    for (const source of output.sources ?? []) if (source.verified) into.add(normalizeUrl(source.url));
    return;
  }
  collectUrls(output, into);
}

function isEnvelopeLike(value: unknown): value is { sources?: Source[] } {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return typeof record.runId === 'string' && typeof record.status === 'string' && 'subtreeUsage' in record;
}

/**
 * The URLs an answer cites, each marked verified when one of the run's own tool calls returned it.
 * A URL the model wrote without having seen it is kept, marked `verified: false`.
 */
export function citedSources(answer: string, seenUrls: ReadonlySet<string>): Source[] {
  const titles = new Map<string, string>();
  for (const match of answer.matchAll(MARKDOWN_LINK)) {
    titles.set(normalizeUrl(match[2] ?? ''), (match[1] ?? '').trim());
  }
  const sources = new Map<string, Source>();
  for (const match of answer.matchAll(URL_PATTERN)) {
    const url = normalizeUrl(match[0]);
    if (sources.has(url)) continue;
    const title = titles.get(url);
    sources.set(url, { url, ...(title ? { title } : {}), verified: seenUrls.has(url) });
  }
  return [...sources.values()];
}
