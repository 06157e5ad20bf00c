import type { Source } from './protocol.ts';

/** The site a source is on ("en.wikipedia.org"), without "www."; the address itself when it is not a URL. */
export function sourceDomain(url: string): string {
  try {
    return new URL(url).hostname.replace(/^www\./, '');
  } catch {
    return url;
  }
}

/**
 * Sources as one list: each address once (the same page cited by several runs is one entry, verified if
 * any run verified it), verified ones first, in the order they were cited otherwise.
 */
export function mergeSources(lists: ReadonlyArray<readonly Source[] | undefined>): Source[] {
  const byUrl = new Map<string, Source>();
  for (const list of lists)
    for (const source of list ?? []) {
      const key = source.url.replace(/\/$/, '');
      const known = byUrl.get(key);
      if (!known) byUrl.set(key, source);
      else if (source.verified && !known.verified) byUrl.set(key, { ...known, verified: true });
      else if (!known.title && source.title) byUrl.set(key, { ...known, title: source.title });
    }
  const merged = [...byUrl.values()];
  return [...merged.filter((source) => source.verified), ...merged.filter((source) => !source.verified)];
}

/** Citations as links with their site and title, each marked verified (a URL a tool returned) or not. */
export function SourcesList({ sources }: { sources: readonly Source[] }) {
  const listed = mergeSources([sources]);
  if (listed.length === 0) return null;
  return (
    <div className="sources">
      <div className="section-label">Sources</div>
      <ul aria-label="Sources">
        {listed.map((source) => (
          <li key={source.url}>
            <span
              className={source.verified ? 'source-verified' : 'source-unverified'}
              role="img"
              aria-label={source.verified ? 'verified' : 'not verified'}
              title={
                source.verified
                  ? 'Verified: returned by a tool call of this run'
                  : 'Not verified: no tool call of this run returned this address'
              }
            >
              {source.verified ? '✓' : '?'}
            </span>
            <span className="source-domain">{sourceDomain(source.url)}</span>
            <a className="source-link" href={source.url} target="_blank" rel="noopener noreferrer">
              {source.title || source.url}
            </a>
            {!source.verified && <span className="source-note">not verified</span>}
          </li>
        ))}
      </ul>
    </div>
  );
}
