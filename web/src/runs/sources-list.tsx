import type { Source } from './protocol.ts';

/** Citations as links, each marked verified (a URL the run's own tools returned) or not. */
export function SourcesList({ sources }: { sources: Source[] }) {
  if (sources.length === 0) return null;
  return (
    <div className="sources">
      <div className="section-label">Sources</div>
      <ul aria-label="Sources">
        {sources.map((source) => (
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
