import type { NetworkToolDeps } from '../http/tool-support.ts';

/** One search a tool asks of a provider (web or image search alike). */
export interface SearchCall {
  deps: NetworkToolDeps;
  query: string;
  max: number;
  signal: AbortSignal;
  /** The tool name, for the cache namespace and TTL. */
  tool: string;
}
