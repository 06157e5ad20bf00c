import { UserError } from '../core/errors.ts';
import type { JobKind, JobQueue, QueuedJob } from '../store/job-queue.ts';
import { idsOf } from './jobs/run-job.ts';

/**
 * The fleet as an operator sees it (`cadre workers`, `cadre queue`): which workers are alive and what
 * each holds, flagged when a run it holds has been silent too long (its lease and heartbeat healthy, its
 * model or tool hung); what waits, is set aside and failed in the queue; and one step to retry or drop a
 * dead letter. Read from the database, so any process of the deployment answers for all of them.
 */

/** How long a held run may store no event before its worker is flagged (`queue.silentAfterSeconds`). */
export const DEFAULT_SILENT_AFTER_SECONDS = 120;

/** What the fleet's use cases need: the store's queue, when it has one (PostgreSQL). */
export interface FleetParts {
  jobs: (() => Promise<JobQueue>) | undefined;
}

/** One job a worker holds, with how long its run has said nothing. */
export interface HeldJobView {
  jobId: string;
  kind: JobKind;
  rootRunId: string;
  runId: string;
  /** Seconds since the worker took it. */
  heldSeconds: number;
  /** Seconds since its run stored its last event (since it was taken, when it has stored none). */
  silentSeconds: number;
  /** Silent past the threshold: the run may be stuck. */
  silent: boolean;
}

/** One worker, alive or gone with jobs still held (they are being given to live workers). */
export interface WorkerView {
  name: string;
  host: string;
  pid: number;
  /** `cadre worker` or serve's (stays), or a terminal's in-process worker. */
  standing: boolean;
  alive: boolean;
  startedAt: string;
  slots: { total: number; used: number; free: number };
  jobs: HeldJobView[];
  /** Alive with a run silent past the threshold. */
  stuck: boolean;
}

export type WorkersReport =
  | { queue: false }
  | { queue: true; silentAfterSeconds: number; workers: WorkerView[] };

/** The workers the database knows, alive first, each with its slots and the jobs it holds. */
export async function workersReport(
  parts: FleetParts,
  options: { silentAfterSeconds?: number | undefined; now?: number } = {},
): Promise<WorkersReport> {
  if (!parts.jobs) return { queue: false };
  const silentAfterSeconds = options.silentAfterSeconds ?? DEFAULT_SILENT_AFTER_SECONDS;
  const now = options.now ?? Date.now();
  const records = await (await parts.jobs()).workers();
  const workers = records.map((record): WorkerView => {
    const jobs = record.jobs.map((job): HeldJobView => {
      const silentSeconds = seconds(now - Math.max(job.lastEventAt ?? job.takenAt, job.takenAt));
      return {
        jobId: job.jobId,
        kind: job.kind,
        rootRunId: job.rootRunId,
        runId: job.runId,
        heldSeconds: seconds(now - job.takenAt),
        silentSeconds,
        silent: silentSeconds >= silentAfterSeconds,
      };
    });
    // A worker of an older Cadre does not say its slots: what it holds is the best guess.
    const used = record.concurrency ? record.slotsUsed : jobs.length;
    const total = record.concurrency || used;
    return {
      name: record.name,
      host: record.host,
      pid: record.pid,
      standing: record.standing,
      alive: record.alive,
      startedAt: new Date(record.startedAt).toISOString(),
      slots: { total, used, free: Math.max(0, total - used) },
      jobs,
      stuck: record.alive && jobs.some((job) => job.silent),
    };
  });
  workers.sort((a, b) => Number(b.alive) - Number(a.alive));
  return { queue: true, silentAfterSeconds, workers };
}

/** A job of the queue, as an operator is shown it: whose it is, which tree and run. */
export interface JobView {
  jobId: string;
  kind: JobKind;
  userId: string;
  rootRunId: string;
  runId: string;
}

export interface QueueReport {
  queue: true;
  /** Jobs not settled, by kind and state (`dead`: dead letters no worker has recorded yet). */
  depth: Array<{ kind: JobKind | 'dead'; state: string; count: number }>;
  /** Seconds the longest-waiting takeable job of each kind has waited. */
  oldestWaitingSeconds: Record<JobKind, number>;
  /** Parents set aside while their sub-agents run. */
  setAside: Array<JobView & { waitingOn: number; sinceSeconds: number }>;
  /** Dead letters: jobs that failed on every try, newest first, kept until dropped (or for 7 days). */
  failures: Array<JobView & { tries: number; failedAt: string; error: string }>;
}

/** How many failures `cadre queue` lists. */
const FAILURES_SHOWN = 20;

/** The queue: its depth per state, parents set aside, the oldest wait, recent failures. */
export async function queueReport(parts: FleetParts): Promise<QueueReport | { queue: false }> {
  if (!parts.jobs) return { queue: false };
  const jobs = await parts.jobs();
  const [stats, setAside, failures] = await Promise.all([
    jobs.stats(),
    jobs.setAside(),
    jobs.failures(FAILURES_SHOWN),
  ]);
  const now = Date.now();
  return {
    queue: true,
    depth: stats.jobs,
    oldestWaitingSeconds: stats.oldestWaitingSeconds,
    setAside: setAside.map((job) => ({
      ...viewOf(job.jobId, job.kind, job.data),
      waitingOn: job.waitingOn,
      sinceSeconds: seconds(now - job.since),
    })),
    failures: failures.map((job) => ({
      ...viewOf(job.id, job.kind, job.data),
      tries: job.tries,
      failedAt: new Date(job.endedAt ?? now).toISOString(),
      error: job.error ?? 'the job failed',
    })),
  };
}

/**
 * The dead letter an operator named (its job id, or a run id of its tree's root or of the sub-agent
 * run), refused unless it failed on every try: a job that waits or runs is not the operator's to retry
 * or drop here.
 */
export async function deadLetter(parts: FleetParts, id: string): Promise<QueuedJob & { view: JobView }> {
  if (!parts.jobs) throw noQueue();
  const jobs = await parts.jobs();
  const job = (await jobs.find(id)) ?? (await jobs.find(`tree:${id}`)) ?? (await jobs.find(`run:${id}`));
  if (!job) throw new UserError('not_found', `There is no job "${id}" in the queue.`, { id });
  if (job.state !== 'failed')
    throw new UserError(
      'not_failed',
      `Job ${job.id} is ${job.state}: only a job that failed on every try (a dead letter) can be retried or dropped.`,
      { id: job.id, state: job.state },
    );
  return { ...job, view: viewOf(job.id, job.kind, job.data) };
}

/** Drops a dead letter (an operator dealt with it); resolves to the job dropped. */
export async function dropDeadLetter(parts: FleetParts, id: string): Promise<JobView> {
  const job = await deadLetter(parts, id);
  await (await parts.jobs!()).drop(job.kind, job.id);
  return job.view;
}

/**
 * The tree a dead letter's retry resumes: a tree job's own. A sub-agent run's failure was handed to its
 * parent, whose run went on with it, so it is not retried alone.
 */
export async function retryTarget(parts: FleetParts, id: string): Promise<JobView> {
  const job = await deadLetter(parts, id);
  if (job.kind === 'run')
    throw new UserError(
      'not_failed',
      `Job ${job.id} is a sub-agent run (${job.view.runId}); its failure was handed to its parent run, which went on without it. Its tree (${job.view.rootRunId}) is retried as a whole: cadre queue retry ${job.view.rootRunId} when it failed too, else ask again.`,
      { id: job.id, rootRunId: job.view.rootRunId },
    );
  return job.view;
}

/** What `cadre workers` and `cadre queue` say on a store with no queue. */
export function noQueue(): UserError {
  return new UserError(
    'no_queue',
    'There is no queue: this Cadre runs each question in the process that asks it (the embedded SQLite store). Set CADRE_DATABASE_URL to a postgres:// URL to run questions on `cadre worker` processes.',
  );
}

function viewOf(jobId: string, kind: JobKind, data: unknown): JobView {
  // A job whose payload is gone (completed, or forgotten) still shows by id.
  if (!data) return { jobId, kind, userId: '', rootRunId: '', runId: '' };
  return { jobId, kind, ...idsOf(kind, data) };
}

function seconds(ms: number): number {
  return Math.max(0, Math.round(ms / 1000));
}
