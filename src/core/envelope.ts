import type { RunStatus } from './status.ts';
import type { Usage } from './usage.ts';

export interface Source {
  url: string;
  title?: string;
  /** True when the URL was returned by one of the run's own tool calls. */
  verified: boolean;
}

/** What a child run hands its parent. The parent model sees a reduced view (see `toModelView`). */
export interface ResultEnvelope {
  status: RunStatus;
  summary: string;
  data?: unknown;
  sources?: Source[];
  usage: Usage;
  subtreeUsage: Usage;
  runId: string;
}

/**
 * The part of an envelope a parent model sees: status and summary, or status and data when the agent
 * declared structured output (the data already holds what the summary would say), and sources.
 */
export function toModelView(envelope: ResultEnvelope): Record<string, unknown> {
  const view: Record<string, unknown> =
    envelope.data === undefined
      ? { status: envelope.status, summary: envelope.summary }
      : { status: envelope.status, data: envelope.data };
  if (envelope.sources?.length) view.sources = envelope.sources.map(({ url, title }) => ({ url, title }));
  return view;
}
