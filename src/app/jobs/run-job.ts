import type { CadreEvent } from '../../core/events.ts';
import type { Runtime } from '../../core/runtime.ts';
import { zeroUsage } from '../../core/usage.ts';
import type { Job, JobKind, JobParent, JobPlace, JobQueue } from '../../store/job-queue.ts';
import type { Store } from '../../store/store.ts';
import type { RuntimeOptions } from '../cadre-parts.ts';
import type { Pricing } from '../pricing.ts';
import { storeAnswerOfStoredTree } from '../stored-answers.ts';
import { runRequestOf } from '../tree-executor.ts';
import { outcomeOf } from '../tree-handle.ts';
import { findRun, queueTimeoutMessage, recordUnstartedRoot, withdrawnSummary } from './close-run.ts';
import { type RunJobData, requestOfRunJob, type TreeJobData } from './job-data.ts';
import { type JobLiveness, JobTreeRecord } from './job-record.ts';

/**
 * Running one job a worker has taken, apart from the worker's loop (tree-worker.ts: taking jobs, slots,
 * heartbeats, setting aside, handing back): the user's runtime built with what the asker composed, the
 * job's record opened, and the tree's root or the sub-agent run run on them, to the output the job ends
 * with.
 */

/** What running a job needs: the store, the queue, a runtime per user, and the configured prices. */
export interface JobParts {
  store: Pick<Store, 'runs' | 'journal' | 'sessions'>;
  jobs: JobQueue;
  runtime: (options: RuntimeOptions) => Promise<Runtime>;
  /** The configured prices of models: a stored answer says what it cost. */
  pricing?: Pricing | undefined;
}

/** How a job's runs meet the worker running them: its liveness, and each of their events. */
export interface JobHooks extends JobLiveness {
  /** Sees each event of the job's runs here. */
  observe: (event: CadreEvent) => void;
}

/**
 * Runs `job` to the output it ends with. A job of a tree that is over ends without running; a stop asked
 * of its tree (or of its run alone) before this worker heard it is passed to `stop` first (a parent put back on the queue after
 * its children were stopped ends cancelled); a sub-agent run whose end is stored already (its worker died
 * between the two) ends with it, since running it again could end it differently.
 */
export async function runJob(
  parts: JobParts,
  job: Job,
  run: { signal: AbortSignal; stop: (reason: string, alone: boolean) => void; hooks: JobHooks },
): Promise<unknown> {
  const { rootRunId, runId } = idsOf(job.kind, job.data);
  const stopped = await parts.jobs.treeStopped(rootRunId, runId).catch(() => undefined);
  if (stopped?.ended) {
    // A root that ended before its answer was stored (its worker handed the job back between the two).
    if (job.kind === 'tree') await storeTreeAnswer(parts, job.data as TreeJobData);
    return endedOutput(job, runId);
  }
  const unrun = job.kind === 'tree' ? await closeUnrunTree(parts, job, stopped) : undefined;
  if (unrun) return unrun;
  if (stopped?.reason) run.stop(stopped.reason, stopped.alone === true);
  const again = job.retryCount > 0 || job.resumed === true;
  const ended = job.kind === 'run' && again ? await storedEnd(parts, job) : undefined;
  if (ended) return ended;
  const data = job.data as TreeJobData | RunJobData;
  const [runtime, record] = await Promise.all([
    parts.runtime({
      userId: idsOf(job.kind, data).userId,
      ...(data.limits ? { limits: data.limits } : {}),
      ...(data.models ? { models: data.models } : {}),
      ...(data.agents ? { agents: data.agents } : {}),
    }),
    JobTreeRecord.open(parts, { kind: job.kind, data, again }, run.hooks),
  ]);
  try {
    return job.kind === 'tree'
      ? await runTree(parts, runtime, record, job.data as TreeJobData, run)
      : await runChild(parts, runtime, record, job.data as RunJobData, run);
  } finally {
    record.close();
  }
}

/**
 * A tree job taken before its root began that must not run: stopped while it waited (the stop recorded,
 * its asker perhaps gone), or taken later than its asker's `queue.waitTimeoutSeconds` allows. Its root is
 * recorded ended, `cancelled` or `timeout` saying why, and its answer stored in its session, as its asker
 * does when it withdraws it; undefined when it is to run.
 */
async function closeUnrunTree(
  parts: JobParts,
  job: Job,
  stopped: { reason?: string; alone?: boolean } | undefined,
): Promise<unknown> {
  const data = job.data as TreeJobData;
  const waited = job.waitingSince === undefined ? 0 : Date.now() - job.waitingSince;
  const late = data.waitTimeoutMs !== undefined && data.waitTimeoutMs > 0 && waited > data.waitTimeoutMs;
  const reason = stopped?.reason !== undefined && !stopped.alone ? stopped.reason : undefined;
  if (reason === undefined && !late) return undefined;
  // Only a tree none of which ran: a job tried before, set aside or handed back goes on (and stops) as any.
  if (job.retryCount > 0 || job.resumed === true) return undefined;
  if (await parts.store.runs.getRunTree(data.userId, data.rootRunId)) return undefined;
  const status = reason !== undefined ? 'cancelled' : 'timeout';
  const summary =
    reason !== undefined ? withdrawnSummary(reason) : queueTimeoutMessage(data.waitTimeoutMs ?? 0);
  await recordUnstartedRoot(parts.store.runs, { ...data, status, summary });
  await storeTreeAnswer(parts, data);
  // The stop is done with once its root says so (a worker dying before this runs nothing of it either).
  await parts.store.runs.takeStopRequests([data.rootRunId]);
  return { status };
}

async function runTree(
  parts: JobParts,
  runtime: Runtime,
  record: JobTreeRecord,
  data: TreeJobData,
  { signal, hooks }: { signal: AbortSignal; hooks: JobHooks },
): Promise<unknown> {
  const { store } = parts;
  let begun = false;
  const outcome = await runtime.run({
    ...runRequestOf(data.spec),
    record,
    userId: data.userId,
    signal,
    rootLimits: data.rootLimits,
    onEvent: (event) => {
      hooks.observe(event);
      if (begun || event.type !== 'run-start' || event.parentRunId !== null) return;
      begun = true;
      void store.journal.begin(data.journalId, data.rootRunId, data.userId, data.spec);
    },
  });
  await store.runs.flush();
  // The answer is stored here, where the tree's root ended, before the job does (its asker waits for
  // the job's end): whether or not the asker still listens.
  await storeTreeAnswer(parts, data);
  return { status: outcome.envelope.status };
}

/**
 * Stores a tree's answer in the session its spec names, folded from its stored events (its sub-agents ran
 * in other jobs), unless the session has it already; `closing`: events about to close the root.
 */
export async function storeTreeAnswer(
  parts: Pick<JobParts, 'store' | 'pricing'>,
  data: TreeJobData,
  closing?: CadreEvent[],
): Promise<void> {
  await storeAnswerOfStoredTree(
    parts.store,
    { userId: data.userId, rootRunId: data.rootRunId, journalId: data.journalId, spec: data.spec },
    { pricing: parts.pricing, ...(closing ? { closing } : {}) },
  );
}

async function runChild(
  parts: JobParts,
  runtime: Runtime,
  record: JobTreeRecord,
  data: RunJobData,
  { signal, hooks }: { signal: AbortSignal; hooks: JobHooks },
): Promise<unknown> {
  // Its parent, in another process, does not see this run's events: the run's model calls go with it.
  let turns = 0;
  const envelope = await runtime.runChild(requestOfRunJob(data), {
    record,
    runId: data.runId,
    signal,
    onEvent: (event) => {
      hooks.observe(event);
      if (event.type === 'step-finish' && event.runId === data.runId) turns++;
    },
  });
  await parts.store.runs.flush();
  return { ...envelope, turns };
}

/** The envelope a sub-agent run's stored end gives, when it has ended. */
async function storedEnd(parts: JobParts, job: Job): Promise<unknown> {
  const { userId, rootRunId, runId } = idsOf(job.kind, job.data);
  const tree = await parts.store.runs.getRunTree(userId, rootRunId).catch(() => undefined);
  const node = tree && findRun(tree, runId);
  if (!node || node.status === 'running') return undefined;
  return { ...outcomeOf(node).envelope, turns: node.turns };
}

/** What a job of a tree that has ended hands back without running: a cancelled run. */
function endedOutput(job: Job, runId: string): unknown {
  if (job.kind === 'tree') return { status: 'cancelled' };
  const summary = 'Not run: its tree had already ended.';
  return { status: 'cancelled', summary, usage: zeroUsage(), subtreeUsage: zeroUsage(), runId, turns: 0 };
}

/** The job of a sub-agent run's parent (the tree's, when the parent is its root), which its end may wake. */
export function parentJob(kind: JobKind, data: unknown): JobParent | undefined {
  if (kind !== 'run') return undefined;
  const { request } = data as RunJobData;
  return request.parentRunId === request.rootRunId
    ? { kind: 'tree', key: `tree:${request.rootRunId}` }
    : { kind: 'run', key: `run:${request.parentRunId}` };
}

/** A job's tree and run, as the queue records who holds it. */
export function placeOf(kind: JobKind, data: unknown): JobPlace {
  const { rootRunId, runId } = idsOf(kind, data);
  return { rootRunId, runId };
}

/** Whom a job's run acts for, its tree, and the run itself (the root, for a tree job). */
export function idsOf(kind: JobKind, data: unknown): { userId: string; rootRunId: string; runId: string } {
  if (kind === 'tree') {
    const tree = data as TreeJobData;
    return { userId: tree.userId, rootRunId: tree.rootRunId, runId: tree.rootRunId };
  }
  const run = data as RunJobData;
  return { userId: run.request.userId, rootRunId: run.request.rootRunId, runId: run.runId };
}
