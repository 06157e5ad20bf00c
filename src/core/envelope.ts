import type { ModelMessage } from 'ai';
import type { RunStatus } from './status.ts';
import { DERIVED_FROM_UNTRUSTED_NOTICE, markDerivedFromUntrusted } from './untrusted.ts';
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
  /** The run (or a run under it) read untrusted external content, so its result is derived from it. */
  untrusted?: boolean;
  /**
   * Model calls the run itself made, when it ran away from its parent's process (a worker), whose events
   * the parent's tree does not see; in process the parent counts them from the events.
   */
  turns?: number;
  /** Set when a person stopped this run alone: the parent should go on with what it had, not ask again. */
  stoppedBy?: 'person';
  /** A stopped run's completed tool calls (their outputs as stored), the work its parent keeps. */
  completedCalls?: CompletedCall[];
  /**
   * A sub-agent run's whole conversation at its end, on its way to its parent (which keeps it, so the run
   * can be continued with `continue_agent`); taken off before the parent's tool call, its events or its
   * journal see the envelope.
   */
  conversation?: ModelMessage[];
}

/** A tool call a run completed, as its envelope carries it when the run was stopped. */
export interface CompletedCall {
  toolCallId: string;
  name: string;
  output: unknown;
}

/**
 * The part of an envelope a parent model sees: status and summary, or status and data when the agent
 * declared structured output (the data already holds what the summary would say), and sources.
 */
export function toModelView(
  envelope: ResultEnvelope,
  maxChars = Number.POSITIVE_INFINITY,
  agent = 'sub-agent',
): Record<string, unknown> {
  const view: Record<string, unknown> =
    envelope.data === undefined
      ? { status: envelope.status, summary: envelope.summary }
      : { status: envelope.status, data: envelope.data };
  // The run's id: what `continue_agent` takes to go on with this run from its own conversation.
  view.run_id = envelope.runId;
  // `verified` tells the parent which links the sub-agent's tools really returned and which it only wrote.
  if (envelope.sources?.length) {
    view.sources = envelope.sources.map(({ url, title, verified }) => ({ url, title, verified }));
  }
  if (envelope.stoppedBy === 'person') Object.assign(view, stoppedView(envelope, maxChars));
  const fitted = JSON.stringify(view).length <= maxChars ? view : cutView(envelope, view, maxChars);
  return envelope.untrusted ? markedUntrusted(fitted, agent) : fitted;
}

/**
 * What a parent's model is told of a run a person stopped: that the person did (so it does not simply
 * start it again), and the tool results it had completed, each cut to a share of the room.
 */
function stoppedView(envelope: ResultEnvelope, maxChars: number): Record<string, unknown> {
  const calls = envelope.completedCalls ?? [];
  const room = Number.isFinite(maxChars)
    ? Math.max(200, Math.floor(maxChars / 2 / Math.max(1, calls.length)))
    : Infinity;
  return {
    stopped_by: 'the person',
    note: 'The person stopped this sub-agent before it finished. Use what it had found; do not start it again for the same task unless the person asks.',
    ...(calls.length
      ? {
          completed_tool_results: calls.map((call) => {
            const text = typeof call.output === 'string' ? call.output : JSON.stringify(call.output ?? null);
            return { tool: call.name, output: text.length <= room ? call.output : `${text.slice(0, room)}…` };
          }),
        }
      : {}),
  };
}

/** A view whose text came from untrusted content: the text inside an untrusted block, and a notice. */
function markedUntrusted(view: Record<string, unknown>, agent: string): Record<string, unknown> {
  const marked: Record<string, unknown> = { status: view.status, derived_from_untrusted_content: true };
  for (const [key, value] of Object.entries(view)) {
    if (key === 'status') continue;
    marked[key] =
      typeof value === 'string' && (key === 'summary' || key === 'data_excerpt')
        ? markDerivedFromUntrusted(agent, value)
        : value;
  }
  marked.notice = DERIVED_FROM_UNTRUSTED_NOTICE;
  return marked;
}

/**
 * A result too long for the parent's context (seed 000's context bloat): the first part of its text (or of
 * its data as JSON), and a note saying how much was left out. The store keeps the whole envelope.
 */
function cutView(
  envelope: ResultEnvelope,
  view: Record<string, unknown>,
  maxChars: number,
): Record<string, unknown> {
  const { sources } = view;
  const body = envelope.data === undefined ? envelope.summary : JSON.stringify(envelope.data);
  const room = Math.max(0, maxChars - 200 - (sources ? JSON.stringify(sources).length : 0));
  const kept = body.slice(0, room);
  return {
    status: envelope.status,
    run_id: envelope.runId,
    [envelope.data === undefined ? 'summary' : 'data_excerpt']: `${kept}…`,
    cut: `The result was ${body.length} characters; only the first ${kept.length} are shown (maxResultChars ${maxChars}).`,
    ...(sources ? { sources } : {}),
    ...(envelope.stoppedBy === 'person' ? { stopped_by: view.stopped_by, note: view.note } : {}),
  };
}
