import type { AgentDefinition } from '../../core/agent-definition.ts';
import type { ChildRunRequest } from '../../core/child-runs.ts';
import type { RuntimeLimits } from '../../core/limits.ts';
import type { Runtime } from '../../core/runtime.ts';
import type { ResumeSpec } from '../../store/journal-store.ts';

/** The models the asker composed the tree with (its config's or CADRE_MODEL), so a worker runs it on them. */
export interface TreeModels {
  /** The root's model, unless its agent names one. */
  main?: string;
  /** Sub-agents' model, unless their definition names one (else each inherits its parent's). */
  subagent?: string;
}

/**
 * What a tree was asked with, as the asker composed it: its limits (config and request), its models and its
 * agents (definition files, the user's settings and documents applied). A worker runs the tree on these, not
 * on its own config and agent files, so a tree runs the same whichever process takes it.
 */
export interface TreeAsked {
  limits?: Partial<RuntimeLimits>;
  models?: TreeModels;
  agents?: AgentDefinition[];
}

/** What `runtime` composes a tree with, as its job carries it to a worker. */
export function askedWith(runtime: Runtime): TreeAsked {
  const { mainModel, subagentModel, agents } = runtime.options;
  return {
    limits: runtime.limits,
    models: {
      ...(mainModel ? { main: mainModel } : {}),
      ...(subagentModel ? { subagent: subagentModel } : {}),
    },
    agents: [...agents.values()],
  };
}

/**
 * The format of the jobs this Cadre puts on the queue and understands. Raised whenever what a job carries
 * changes so that an older worker would run it wrongly; a worker leaves a job of a newer format on the
 * queue (for an upgraded worker) and says so, so a rolling upgrade never runs a job on code that does not
 * understand it. Jobs without one were queued before formats were carried: format 1.
 */
export const JOB_FORMAT = 2;

/**
 * Each job says the oldest format that runs it right, so a worker from before a change still takes every
 * job the change does not concern. Format 2 added `RunJobData.forked` (a forked child's conversation and
 * prefix as JSON text); tree jobs and other run jobs are format 1.
 */
export const FORKED_JOB_FORMAT = 2;
export const PLAIN_JOB_FORMAT = 1;

/** The format a job's data says it has (see JOB_FORMAT). */
export function jobFormat(data: unknown): number {
  const format = (data as { format?: unknown } | null)?.format;
  return typeof format === 'number' && Number.isInteger(format) && format > 0 ? format : 1;
}

/** What a `tree` job carries: the tree as its journal's spec says, with the ids decided when it was asked. */
export interface TreeJobData {
  /** See JOB_FORMAT. */
  format?: number;
  journalId: string;
  userId: string;
  rootRunId: string;
  spec: ResumeSpec;
  limits?: Partial<RuntimeLimits>;
  models?: TreeModels;
  /** The agents the asker composed (absent in jobs queued before they were carried: the worker's own). */
  agents?: AgentDefinition[];
  rootLimits?: Partial<Pick<RuntimeLimits, 'maxTurns' | 'timeoutMs'>>;
  /**
   * How long it may wait for a worker (`queue.waitTimeoutSeconds` of its asker): a worker that takes it
   * later than that closes its root `timeout` without running it (its asker, if alive, withdraws it then).
   */
  waitTimeoutMs?: number;
}

/** What a `run` job carries: the child as data, its id, and the tree's journal. */
export interface RunJobData {
  /** See JOB_FORMAT. */
  format?: number;
  request: ChildRunRequest;
  /**
   * A forked child's `context` and `fork` (taken out of `request`) as JSON text: the queue keeps job data
   * as PostgreSQL jsonb, which reorders object keys, and the fork's requests must be its parent's byte for
   * byte (tool schemas, tool inputs and results) for a provider's prompt cache to read them.
   */
  forked?: string;
  runId: string;
  journalId: string;
  limits?: Partial<RuntimeLimits>;
  models?: TreeModels;
  agents?: AgentDefinition[];
}

/** A child's request as a run job carries it: a forked one's conversation and prefix kept as exact text. */
export function runJobRequest(request: ChildRunRequest): Pick<RunJobData, 'format' | 'request' | 'forked'> {
  if (!request.fork) return { format: PLAIN_JOB_FORMAT, request };
  const { context, fork, ...rest } = request;
  return {
    format: FORKED_JOB_FORMAT,
    request: { ...rest, context: [] },
    forked: JSON.stringify({ context, fork }),
  };
}

/** The child's request of a run job, a forked one's conversation and prefix as the parent sent them. */
export function requestOfRunJob(data: RunJobData): ChildRunRequest {
  if (data.forked === undefined) return data.request;
  const { context, fork } = JSON.parse(data.forked) as Required<Pick<ChildRunRequest, 'context' | 'fork'>>;
  return { ...data.request, context, fork };
}
