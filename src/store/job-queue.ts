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
  /**
   * Which try of the job this is (1 for the first), counting only tries that failed before it, as pg-boss
   * counts them: being set aside or handed back by a stopping worker is not a try. Absent where unknown.
   */
  tries?: number;
  /** Taken again after it was suspended while its children ran (see `suspend`): its run goes on from its journal. */
  resumed?: boolean;
  /** When it became takeable (queued, or due again after a failed try), ms since the epoch. */
  waitingSince?: number;
}

/** The queue as an operator sees it: jobs by kind and state, parents set aside, the oldest wait. */
export interface QueueStats {
  /** Jobs not yet settled, by kind (`dead` for dead letters not yet settled) and pg-boss state. */
  jobs: Array<{ kind: JobKind | 'dead'; state: string; count: number }>;
  /** Parent jobs set aside while their sub-agents run. */
  setAside: number;
  /** Seconds the longest-waiting takeable job of each kind has waited (0 when none waits). */
  oldestWaitingSeconds: Record<JobKind, number>;
}

/** One worker as the database knows it: alive while it holds its lease, with what it holds. */
export interface WorkerRecord {
  id: string;
  name: string;
  pid: number;
  host: string;
  /** Serve's or `cadre worker`'s (stays to take what others left), or a terminal's in-process worker. */
  standing: boolean;
  /** Holds its lease now (its process is alive and reaches the database). */
  alive: boolean;
  startedAt: number;
  /** Its slots, and how many it last said it uses (a parent waiting on its sub-agents uses none). */
  concurrency: number;
  slotsUsed: number;
  /** The jobs it holds now, each with the time of the last event its run stored (undefined: none yet). */
  jobs: Array<{
    jobId: string;
    kind: JobKind;
    rootRunId: string;
    runId: string;
    retryCount: number;
    takenAt: number;
    lastEventAt: number | undefined;
  }>;
}

/** A job as the queue has it, whatever its state, for an operator to look at, retry or drop. */
export interface QueuedJob {
  id: string;
  kind: JobKind;
  /** pg-boss's state: created, retry, active, completed, cancelled, failed. */
  state: string;
  data: unknown;
  /** Tries it has had, as pg-boss counts them less set-asides, hand-backs and postponements (0: never run). */
  tries: number;
  createdAt: number;
  /** When it ended (completed, failed, cancelled). */
  endedAt: number | undefined;
  /** Why it failed, for a failed job. */
  error: string | undefined;
}

/** A parent job set aside while its sub-agents run. */
export interface SetAsideJob {
  jobId: string;
  kind: JobKind;
  data: unknown;
  /** Child jobs it still waits on. */
  waitingOn: number;
  since: number;
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

/** What processes say to each other: a job is waiting, a job has ended, a tree or a run is to stop, an approval was decided. */
export type QueueSignal = 'jobs' | 'ended' | 'stop' | 'decided';

/** An approval request waiting in the database for a person, as JSON, with whom it belongs to. */
export interface StoredApproval {
  approvalId: string;
  userId: string;
  /** The request (core's ApprovalRequest) as JSON. */
  request: string;
}

/** The job of a sub-agent run's parent: the tree's (its root) or another run's, by the key it was enqueued under. */
export interface JobParent {
  kind: JobKind;
  key: string;
}

/** Which tree a job belongs to and which run it runs (its root, for a tree job). */
export interface JobPlace {
  rootRunId: string;
  runId: string;
}

/** One worker's place in the queue: alive (to every process) until released or its process dies. */
export interface WorkerLease {
  id: string;
  release(): Promise<void>;
}

/** Jobs a worker that is gone held, as `reap` left them. */
export interface ReapedJobs {
  /** Back on the queue, for a live worker to take and continue from the journal. */
  retried: JobPlace[];
  /** Taken off the queue: no live worker could take them. Their trees are to be closed `interrupted`. */
  givenUp: Array<JobPlace & { pid: number; host: string }>;
}

/** The queue itself: trees and sub-agent runs put on it, taken by workers, ended, set aside, handed back, reaped. */
export interface TreeQueue {
  /** The id a job enqueued under `key` has (what `take` hands out and `ended` signals carry). */
  jobId(key: string): string;
  /** Adds a job; one with that id already there is left as it is. */
  enqueue(kind: JobKind, id: string, data: unknown): Promise<void>;
  /**
   * Takes a job no worker has taken yet off the queue (its asker cancelled it, or went away): true when
   * it was still waiting and is now withdrawn (it ends cancelled and never runs), false when a worker has
   * it (or had it once) or it has ended: stopping it is then that worker's to do.
   */
  withdraw(kind: JobKind, key: string): Promise<boolean>;
  /**
   * Deletes the jobs enqueued under these keys, whatever their state (their payloads carry questions,
   * histories and outputs): for data a person removed. Keys of jobs that are not there are ignored.
   */
  forget(keys: ReadonlyArray<{ kind: JobKind; key: string }>): Promise<void>;
  /**
   * Makes a worker known: `standing` workers (serve, `cadre worker`) stay to take what another worker
   * left; a terminal's in-process worker leaves with its answer.
   */
  enlist(worker: { name: string; standing: boolean; concurrency?: number }): Promise<WorkerLease>;
  /** Says how many of its slots worker `workerId` uses now (what `workers` shows). */
  reportSlots(workerId: string, used: number): Promise<void>;
  /** The workers the database knows, alive or gone with jobs still held, with what each holds. */
  workers(): Promise<WorkerRecord[]>;
  /** Parent jobs set aside while their sub-agents run, oldest first. */
  setAside(): Promise<SetAsideJob[]>;
  /** Jobs that failed on every try (dead letters, kept until dropped or for pg-boss's 7 days), newest first. */
  failures(limit: number): Promise<QueuedJob[]>;
  /** The job with this id (pg-boss's UUID) or enqueued under this key, of either kind. */
  find(idOrKey: string): Promise<QueuedJob | undefined>;
  /** Deletes a failed job (a dead letter an operator dealt with); false when it is not a failed job. */
  drop(kind: JobKind, id: string): Promise<boolean>;
  /**
   * The newest tree asked in `userId`'s session `sessionId` that no worker has taken yet (still waiting
   * on the queue, never begun), with the id its answer will be stored under: a page opened meanwhile
   * says it is queued and attaches once it starts.
   */
  waitingTree(
    userId: string,
    sessionId: string,
  ): Promise<{ rootRunId: string; answerId?: string } | undefined>;
  /**
   * Whether a tree's jobs should not run (any more): its root has ended (`ended`, e.g. interrupted and
   * resumed as a new attempt), or a stop was asked of it (`reason`) that a worker may not have heard; with
   * `runId`, a stop asked of that run alone (`alone`) counts too.
   */
  treeStopped(
    rootRunId: string,
    runId?: string,
  ): Promise<{ ended: boolean; reason?: string; alone?: boolean } | undefined>;
  /**
   * Stops `userId`'s tree `rootRunId` that waits on the queue (no worker has taken it): recorded durably
   * (a stop request keyed by its root, read by `treeStopped`), so a worker that takes it later, even one
   * started after this, closes it `cancelled` without running it; and said (the `stop` signal) to the
   * processes alive now, its asker among them, which withdraws it at once.
   */
  stopWaiting(userId: string, rootRunId: string, reason: string): Promise<void>;
  /** Whether a worker other than `workerId` is alive (holds its lease). */
  othersAlive(workerId: string): Promise<boolean>;
  /** How many workers are alive now (hold their lease): any process working the queue. */
  liveWorkers(): Promise<number>;
  /** What waits, runs and failed, read in one go (metrics, `/ready`'s neighbours). */
  stats(): Promise<QueueStats>;
  /** Claims up to `count` waiting jobs (sub-agent runs before trees, oldest first) for worker `workerId`. */
  take(count: number, workerId: string, placeOf: (job: Job) => JobPlace): Promise<Job[]>;
  /**
   * Tells the queue worker `workerId` still works on these jobs (else they are retried elsewhere); resolves
   * to the attempts among them it no longer holds (taken from it as if it were gone): they stop there.
   */
  heartbeat(jobs: readonly Job[], workerId: string): Promise<Job[]>;
  /**
   * Ends this attempt of the job (a later attempt, after it was taken from this worker, is left alone).
   * With `parent` (a sub-agent run's), in the same transaction: the parent's job, if set aside for it and
   * this was the last child it waits on, goes back on the queue (see `suspend`).
   */
  complete(job: Job, output: unknown, parent?: JobParent): Promise<void>;
  /** Fails this attempt; the job is retried, or dead-lettered once its retries are spent. */
  fail(job: Job, error: string): Promise<void>;
  /**
   * Sets a parent job aside while it waits on child jobs (`children`, their ids): it holds no worker and
   * no slot until the last of them ends and `childEnded` puts it back on the queue, where it is taken
   * again (`resumed`) and goes on from its journal. False, with nothing done, when every child has ended
   * already or this attempt is no longer the worker's.
   */
  suspend(job: Job, children: readonly string[]): Promise<boolean>;
  /**
   * Puts a job a worker is handing over (it is stopping) back on the queue at once, as it is: the try is
   * not counted as failed, and the job is taken again `resumed`.
   */
  handBack(job: Job): Promise<void>;
  /**
   * Puts a job this worker will not run back on the queue, takeable again in `seconds` (by any worker):
   * the try is not counted, and it is not taken `resumed` (it never ran).
   */
  postpone(job: Job, seconds: number): Promise<void>;
  /**
   * The jobs of workers that are gone (killed, lost): retried when a live worker can take them, else taken
   * off the queue for their trees to be closed `interrupted` (and resumed by a person).
   */
  reap(): Promise<ReapedJobs>;
  state(kind: JobKind, id: string): Promise<JobState>;
  /** Claims dead-lettered jobs, to record why their runs ended; settle each with `settleDead`. */
  takeDead(count: number): Promise<DeadJob[]>;
  /** Settles a dead letter; with `parent`, wakes it as `complete` does, in the same transaction. */
  settleDead(job: DeadJob, parent?: JobParent): Promise<void>;
}

/** What processes say to each other, each heard by every process listening (NOTIFY on PostgreSQL). */
export interface JobSignals {
  signal(signal: QueueSignal, payload: string): Promise<void>;
  /**
   * Calls `listener` with each signal's payload, and with `*` after the connection was lost and came
   * back (signals may have been missed: look again). Resolves once listening.
   */
  listen(signal: QueueSignal, listener: (payload: string) => void): Promise<() => void>;
}

/** A tree's shared token budget, charged by every process running a part of it. */
export interface TreeLedgerStore {
  /** Adds `tokens` to a tree's shared ledger; resolves to what the whole tree has spent. */
  charge(rootRunId: string, tokens: number): Promise<number>;
  spent(rootRunId: string): Promise<number>;
}

/** Claims held across every process of the database (one resume of a journal at a time). */
export interface ResumeClaims {
  /**
   * Claims `key` across every process of the database until released (a resume of one journal): resolves
   * to the release, or to the process holding it. A claim whose process dies is let go.
   */
  claim(key: string): Promise<{ release: () => Promise<void> } | { heldBy: { pid: number; host: string } }>;
}

/** Secrets every process of the database shares. */
export interface SharedSecrets {
  /** A secret every process of this database shares, made once by whichever asks first (the approval key). */
  sharedSecret(name: string): Promise<Buffer>;
}

/** Approval requests waiting in the database for a person, answered from any process. */
export interface ApprovalStore {
  /** Records a request waiting for a decision, so any process can list and answer it. */
  putApproval(approval: StoredApproval): Promise<void>;
  /** The user's waiting requests, oldest first. */
  pendingApprovals(userId: string): Promise<StoredApproval[]>;
  /**
   * Records the decision (JSON) for a waiting request of `userId` and tells the waiting process; false
   * when there is no such request for the user (answered already, or never asked).
   */
  decideApproval(userId: string, approvalId: string, decision: string): Promise<boolean>;
  /**
   * Records a decision the asking process made on a request it saw in the tree's events (the CLI's prompt
   * or flags), whether or not the worker has recorded the request yet.
   */
  decideSeenApproval(approval: StoredApproval, decision: string): Promise<void>;
  /** The decision for a request once there is one (taken: the request is no longer waiting). */
  takeDecision(approvalId: string): Promise<string | undefined>;
  /** Withdraws a request nobody answered (its run ended, its wait timed out). */
  dropApproval(approvalId: string): Promise<void>;
}

/**
 * Everything a store shared by several processes offers for runs as jobs, by concern: code that needs one
 * concern takes that interface alone (the ledger, the approvals, the claims…), so each stays small and has
 * a contract test of its own (test/postgres/job-concerns.test.ts).
 */
export interface JobQueue
  extends TreeQueue,
    JobSignals,
    TreeLedgerStore,
    ResumeClaims,
    SharedSecrets,
    ApprovalStore {
  close(): Promise<void>;
}
