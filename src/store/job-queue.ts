/**
 * Runs as jobs, for a store that more than one process shares (the PostgreSQL mode): the queue every
 * process puts trees and sub-agent runs on, and any worker takes them from. The backend's own job engine
 * does the hard parts (claiming a job exactly once, heartbeats, retries, dead letters); this is the shape
 * Cadre needs of it, so `app/` depends on no engine.
 */

/** `tree`: a whole tree from its root; `run`: one sub-agent run, under a parent waiting elsewhere. */
export type JobKind = 'tree' | 'run';

export interface Job {
  /** Decided by whoever enqueues it (derived from what it runs, so a retried dispatch finds the same job). */
  id: string;
  kind: JobKind;
  data: unknown;
  /** 0 for the first attempt; more after a worker died holding it or it failed. */
  retryCount: number;
}

/** Where a job is: waiting (or waiting for a retry), being run, or ended (with its output or error). */
export type JobState =
  | { state: 'waiting' | 'active' }
  | { state: 'completed'; output: unknown }
  | { state: 'failed'; error: string }
  | { state: 'missing' };

/** A job that failed past its retries: taken from the dead-letter queue, with why it last failed. */
export interface DeadJob {
  /** The dead-letter job's own id (to settle it). */
  id: string;
  /** The failed job's id and what it was. */
  sourceId: string;
  kind: JobKind;
  data: unknown;
  error: string;
}

/** What processes say to each other: a job is waiting, a job has ended, a tree or a run is to stop. */
export type QueueSignal = 'jobs' | 'ended' | 'stop';

export interface JobQueue {
  /** The id a job enqueued under `key` has (what `take` hands out and `ended` signals carry). */
  jobId(key: string): string;
  /** Adds a job; one with that id already there is left as it is. */
  enqueue(kind: JobKind, id: string, data: unknown): Promise<void>;
  /** Claims up to `count` waiting jobs (sub-agent runs before trees, oldest first). */
  take(count: number): Promise<Job[]>;
  /** Tells the queue this process still works on these jobs (else they are retried elsewhere). */
  heartbeat(jobs: readonly Job[]): Promise<void>;
  complete(job: Job, output: unknown): Promise<void>;
  /** Fails this attempt; the job is retried, or dead-lettered once its retries are spent. */
  fail(job: Job, error: string): Promise<void>;
  state(kind: JobKind, id: string): Promise<JobState>;
  /** Claims dead-lettered jobs, to record why their runs ended; settle each with `settleDead`. */
  takeDead(count: number): Promise<DeadJob[]>;
  settleDead(job: DeadJob): Promise<void>;
  /** Adds `tokens` to a tree's shared ledger; resolves to what the whole tree has spent. */
  charge(rootRunId: string, tokens: number): Promise<number>;
  spent(rootRunId: string): Promise<number>;
  signal(signal: QueueSignal, payload: string): Promise<void>;
  /**
   * Calls `listener` with each signal's payload, and with `*` after the connection was lost and came
   * back (signals may have been missed: look again). Resolves once listening.
   */
  listen(signal: QueueSignal, listener: (payload: string) => void): Promise<() => void>;
  close(): Promise<void>;
}
