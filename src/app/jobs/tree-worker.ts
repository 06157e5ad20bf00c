import { hostname } from 'node:os';
import { describeError, ParentEnded, RunHandedOff, RunStopped } from '../../core/errors.ts';
import type { CadreEvent } from '../../core/events.ts';
import { Semaphore } from '../../core/semaphore.ts';
import type { Job, WorkerLease } from '../../store/job-queue.ts';
import { Wakeup } from '../follow-events.ts';
import { closingOf, recordClosing, recordUnstartedRoot } from './close-run.ts';
import { JOB_FORMAT, jobFormat, type TreeJobData } from './job-data.ts';
import type { WhileWaiting } from './job-record.ts';
import { JobSlot } from './job-slot.ts';
import {
  idsOf,
  type JobHooks,
  type JobParts,
  parentJob,
  placeOf,
  runJob,
  storeTreeAnswer,
} from './run-job.ts';

/** What a worker needs: the store, the queue, and a runtime per user (what running each job needs). */
export type WorkerParts = JobParts;

export interface WorkerOptions {
  /** Jobs run at once (a parent waiting on its children does not count). */
  concurrency: number;
  /** How the worker is named on the runs it executes; default host:pid. */
  name?: string;
  /** On a SIGTERM-like stop, how long running jobs may go on before they are handed back to the queue. */
  drainMs?: number;
  /** How long a parent waits on its children before its job is set aside (see `#trySuspend`); default 1 s. */
  suspendAfterMs?: number;
  /**
   * A worker that stays (serve, `cadre worker`): what a gone worker held is retried for it to take, and
   * what it still holds when stopped goes back on the queue. A terminal's worker (false, the default)
   * leaves with its answer: what it still holds then is closed `interrupted` unless a standing worker
   * is there to take it.
   */
  standing?: boolean;
}

/** How often a worker tells the queue it still holds its jobs (pg-boss fails them after 10 s without). */
const HEARTBEAT_EVERY_MS = 3_000;
/** How often the queue is looked at when no signal came (a missed NOTIFY). */
const POLL_MS = 1_000;
/**
 * How long a parent waits on its children before its job is set aside: sub-agents that answer within it
 * cost no round trip through the queue; longer ones leave the parent holding nothing while they run.
 */
const SUSPEND_AFTER_MS = 1_000;
/** How long a job of a newer format than this worker understands is left for another worker to take. */
const NEWER_FORMAT_WAIT_SECONDS = 10;
/** How often dead-lettered jobs and the jobs of gone workers are looked for. */
const DEAD_EVERY_MS = 3_000;

interface ActiveJob {
  job: Job;
  controller: AbortController;
  rootRunId: string;
  runId: string;
  /** Child jobs it is waiting on now, by id, with how many of its calls wait on each (it holds no slot meanwhile). */
  waitingOn: Map<string, number>;
  /** Its run's tool calls without a result yet. */
  pending: Set<string>;
  /** Its run's own signal (seen as it waits): a run being stopped ends here rather than being set aside. */
  runSignal?: AbortSignal;
  /** Looks whether the job can be set aside while it waits (see `#trySuspend`). */
  suspendTimer?: NodeJS.Timeout | undefined;
}

/** How a worker was done with one attempt of a job: see `TreeWorker.onEnd`. */
export type JobOutcome = 'completed' | 'failed' | 'handed_back' | 'set_aside' | 'taken' | 'left' | 'refused';

/**
 * A worker: takes trees and sub-agent runs from the queue and runs them, `concurrency` at a time. A parent
 * waiting on its children gives its slot back for the wait, so one worker with one slot finishes a tree of
 * any shape. Heartbeats keep its jobs; when the process dies they stop, and the queue hands the jobs to
 * another worker, which continues each run from the tree's journal. Stops reach its runs by signal.
 * This is the loop (taking, slots, heartbeats, setting aside, handing back on SIGTERM); running one job
 * (its runtime, its record, its root or sub-agent run) is `runJob` (run-job.ts).
 */
export class TreeWorker {
  readonly name: string;
  readonly concurrency: number;
  #parts: WorkerParts;
  #slots: Semaphore;
  #active = new Map<string, ActiveJob>();
  #stopped = new Map<string, Error>();
  #running = false;
  #wake = new Wakeup();
  #loop: Promise<void> | undefined;
  #timers: NodeJS.Timeout[] = [];
  #unlisten: Array<() => void> = [];
  #drainMs: number;
  #standing: boolean;
  #suspendAfterMs: number;
  /** Whether jobs still held when stopping go back on the queue (see `stop`). */
  #handsBack = true;
  /** Stopping: each run hands itself over at its next step boundary (see `stop`). */
  #yielding = false;
  #lease: WorkerLease | undefined;
  /** Called as a job is set aside to wait on its children (for a worker's log). */
  onSetAside: ((job: Job, children: number) => void) | undefined;
  /** Called as each job starts (for a worker's log). */
  onJob: ((job: Job) => void) | undefined;
  /**
   * Called the first time this worker leaves a job on the queue because it does not understand it (its
   * format is newer: see JOB_FORMAT), with why, for the worker's log.
   */
  onRefused: ((job: Job, reason: string) => void) | undefined;
  /** Jobs already said to be refused, so the log says each once. */
  #refused = new Set<string>();
  /** Called as this worker is done with a job's attempt, with how it ended here (metrics). */
  onEnd: ((job: Job, outcome: JobOutcome) => void) | undefined;

  constructor(parts: WorkerParts, options: WorkerOptions) {
    this.#parts = parts;
    this.concurrency = Math.max(1, Math.floor(options.concurrency));
    this.#slots = new Semaphore(this.concurrency);
    this.name = options.name ?? `${hostname()}:${process.pid}`;
    this.#drainMs = options.drainMs ?? 10_000;
    this.#standing = options.standing ?? false;
    this.#suspendAfterMs = options.suspendAfterMs ?? SUSPEND_AFTER_MS;
  }

  /** Slots held now (a job waiting on its sub-agents holds none). */
  get slotsUsed(): number {
    return this.concurrency - this.#slots.available;
  }

  /** Jobs this worker holds now (running or waiting on children). */
  get active(): number {
    return this.#active.size;
  }

  /** Starts taking jobs; resolves once the worker listens for them. */
  async start(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    const { jobs } = this.#parts;
    const lease = await jobs.enlist({
      name: this.name,
      standing: this.#standing,
      concurrency: this.concurrency,
    });
    this.#lease = lease;
    this.#unlisten.push(await jobs.listen('jobs', () => this.#wake.wake()));
    this.#unlisten.push(await jobs.listen('stop', (payload) => this.#stopHeard(payload)));
    let slotsReported = 0;
    const heartbeat = setInterval(() => {
      // What `cadre workers` shows of this worker's slots, said when it changed.
      const used = this.slotsUsed;
      if (used !== slotsReported)
        jobs.reportSlots(lease.id, used).then(
          () => {
            slotsReported = used;
          },
          () => {},
        );
      const held = [...this.#active.values()].map((active) => active.job);
      if (!held.length) return;
      jobs
        .heartbeat(held, lease.id)
        .then((lost) => {
          // Taken from this worker (it was judged gone): another worker runs it now, so it stops here.
          for (const job of lost) {
            const active = this.#active.get(job.id);
            // The attempt the heartbeat was about, not one taken again since.
            if (active?.job.retryCount === job.retryCount)
              active.controller.abort(new JobTaken('taken by another worker'));
          }
        })
        .catch(() => {});
    }, HEARTBEAT_EVERY_MS);
    this.#timers.push(heartbeat);
    this.#loop = this.#work();
  }

  /**
   * Stops taking jobs. Each running job goes on to its next step boundary (its model step or tool call in
   * flight ends and is committed) and is handed back there, to continue elsewhere from the journal; one
   * waiting on children is handed back at once (they go on). What has not reached a boundary after
   * `drainMs` is stopped where it is. Resolves once none is held.
   */
  async stop(options: { drainMs?: number } = {}): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    // Decided before any run hands itself over: a terminal's worker hands its jobs back only when another
    // worker is there to take them; else they are left as a killed worker's would be (their trees
    // interrupted, for a person to resume).
    this.#handsBack =
      this.#standing || (await this.#parts.jobs.othersAlive(this.#lease!.id).catch(() => false));
    this.#yielding = true;
    this.#wake.wake();
    await this.#loop;
    for (const active of this.#active.values()) if (active.waitingOn.size) this.#handBack(active);
    const drainMs = options.drainMs ?? this.#drainMs;
    const deadline = Date.now() + drainMs;
    while (this.#active.size && Date.now() < deadline) await sleep(50);
    for (const active of this.#active.values())
      active.controller.abort(new WorkerStopping('the worker is stopping'));
    while (this.#active.size) await sleep(20);
    for (const timer of this.#timers) clearInterval(timer);
    for (const unlisten of this.#unlisten) unlisten();
    await this.#lease?.release();
    // What it left is reaped like a killed worker's jobs.
    if (!this.#handsBack) await this.#parts.store.runs.markInterrupted().catch(() => {});
  }

  async #work(): Promise<void> {
    let lastDead = 0;
    while (this.#running) {
      let took = 0;
      // A parent waiting for its slot back goes first: new work waits until no one is queued.
      const free = this.#slots.waiting ? 0 : this.#slots.available;
      if (free > 0) {
        const jobs = await this.#parts.jobs
          .take(free, this.#lease!.id, (job) => placeOf(job.kind, job.data))
          .catch(() => []);
        for (const job of jobs) this.#begin(job);
        took = jobs.length;
      }
      if (Date.now() - lastDead >= DEAD_EVERY_MS) {
        lastDead = Date.now();
        await this.#settleDead().catch(() => {});
        // A worker that died (killed, its machine lost) is seen at once: its jobs go to a live one.
        await this.#parts.store.runs.markInterrupted().catch(() => {});
      }
      if (took || !this.#running) continue;
      await this.#wake.wait(POLL_MS);
    }
  }

  #begin(job: Job): void {
    const format = jobFormat(job.data);
    if (format > JOB_FORMAT) {
      void this.#refuse(job, format);
      return;
    }
    // Taken with slots free and nothing queued for one: this resolves at once.
    const slot = this.#slots.acquire();
    const ids = idsOf(job.kind, job.data);
    const active: ActiveJob = {
      job,
      controller: new AbortController(),
      rootRunId: ids.rootRunId,
      runId: ids.runId,
      waitingOn: new Map(),
      pending: new Set(),
    };
    this.#active.set(job.id, active);
    const stopReason = this.#stopped.get(ids.rootRunId) ?? this.#stopped.get(ids.runId);
    if (stopReason !== undefined) active.controller.abort(stopReason);
    this.onJob?.(job);
    void slot.then((release) => this.#execute(active, new JobSlot(this.#slots, release)));
  }

  /**
   * Leaves a job of a newer format than this worker understands on the queue (a rolling upgrade: an
   * upgraded worker takes it), without running any of it and without spending a try.
   */
  async #refuse(job: Job, format: number): Promise<void> {
    await this.#parts.jobs.postpone(job, NEWER_FORMAT_WAIT_SECONDS).catch(() => {});
    this.onEnd?.(job, 'refused');
    if (this.#refused.has(job.id)) return;
    if (this.#refused.size > 500) this.#refused.clear();
    this.#refused.add(job.id);
    this.onRefused?.(
      job,
      `its format (${format}) is newer than this worker understands (${JOB_FORMAT}): a newer Cadre queued it; upgrade this worker`,
    );
  }

  /** Hands the job back to the queue while its run is between steps (the worker is stopping). */
  #handBack(active: ActiveJob): void {
    if (!active.controller.signal.aborted)
      active.controller.abort(new WorkerStopping('the worker is stopping'));
  }

  async #execute(active: ActiveJob, slot: JobSlot): Promise<void> {
    const { job, controller } = active;
    const { jobs } = this.#parts;
    // The job's slot, given back while the run waits for children and taken again when they are done.
    const whileWaiting: WhileWaiting = async (childJobId, stop, wait) => {
      // A run being stopped (cancelled, out of time) waits for its children to stop, then ends here.
      active.runSignal = stop;
      slot.beginWait();
      this.#wake.wake();
      active.waitingOn.set(childJobId, (active.waitingOn.get(childJobId) ?? 0) + 1);
      if (this.#yielding) this.#handBack(active);
      active.suspendTimer ??= setTimeout(() => void this.#trySuspend(active), this.#suspendAfterMs);
      try {
        return await wait();
      } finally {
        const left = (active.waitingOn.get(childJobId) ?? 1) - 1;
        if (left) active.waitingOn.set(childJobId, left);
        else active.waitingOn.delete(childJobId);
        if (active.waitingOn.size === 0) {
          clearTimeout(active.suspendTimer);
          active.suspendTimer = undefined;
        }
        // Handed over (set aside, or the worker stopping): the run unwinds here and takes no slot again.
        if (controller.signal.reason instanceof RunHandedOff) slot.leaveWait();
        // Else the last wait to end takes a slot again; the run's stop (its time limit, a cancel) or the
        // worker's ends that wait too.
        else await slot.endWait(AbortSignal.any([stop, controller.signal]));
      }
    };
    const atBoundary = () => {
      if (this.#yielding) this.#handBack(active);
    };
    const observe = (event: CadreEvent) => {
      if (event.runId !== active.runId) return;
      if (event.type === 'tool-call' && !event.refused) active.pending.add(event.toolCallId);
      else if (event.type === 'tool-result') active.pending.delete(event.toolCallId);
    };
    const hooks: JobHooks = { worker: this.name, whileWaiting, atBoundary, observe };
    try {
      const output = await runJob(this.#parts, job, {
        signal: controller.signal,
        // A stop this worker did not hear (asked before it took the job).
        stop: (reason, alone) => {
          if (!controller.signal.aborted)
            controller.abort(alone ? new RunStopped(reason) : new Error(reason));
        },
        hooks,
      });
      if (this.#handedOver(controller.signal)) return this.#ended(job, controller.signal);
      if (controller.signal.reason instanceof WorkerStopping) {
        // Back on the queue as it is, for another worker to go on from its journal (not a failed try).
        await this.#handBackJob(job);
        return;
      }
      await jobs.complete(job, output, parentJob(job.kind, job.data));
      this.onEnd?.(job, 'completed');
    } catch (error) {
      if (controller.signal.reason instanceof WorkerStopping && this.#handsBack) await this.#handBackJob(job);
      else if (!this.#handedOver(controller.signal)) {
        await jobs.fail(job, describeError(error)).catch(() => {});
        this.onEnd?.(job, 'failed');
      } else this.#ended(job, controller.signal);
    } finally {
      clearTimeout(active.suspendTimer);
      // Taken again meanwhile (set aside and put back at once): that attempt is the one held now.
      if (this.#active.get(job.id) === active) this.#active.delete(job.id);
      slot.end();
      this.#wake.wake();
    }
  }

  /**
   * Whether the job is no longer this worker's to settle: taken by another worker, or left by a terminal's
   * worker as it stops (reaped like a killed worker's, see `stop`).
   */
  #handedOver(signal: AbortSignal): boolean {
    return (
      signal.reason instanceof JobTaken ||
      signal.reason instanceof JobSetAside ||
      (signal.reason instanceof WorkerStopping && !this.#handsBack)
    );
  }

  /** Puts a job back on the queue as it is; failing that (the database gone), fails this try. */
  async #handBackJob(job: Job): Promise<void> {
    const { jobs } = this.#parts;
    await jobs.handBack(job).catch(() => jobs.fail(job, 'the worker stopped').catch(() => {}));
    this.onEnd?.(job, 'handed_back');
  }

  /** A job no longer this worker's to settle: set aside, taken by another worker, or left as it stops. */
  #ended(job: Job, signal: AbortSignal): void {
    this.onEnd?.(
      job,
      signal.reason instanceof JobSetAside
        ? 'set_aside'
        : signal.reason instanceof JobTaken
          ? 'taken'
          : 'left',
    );
  }

  /**
   * A parent that has waited a while, with every call it has in flight waiting on a child job, is set
   * aside: its job ends here (the queue keeps it with the children it waits on) and the last child to end
   * puts it back, for any worker to go on from its journal. It holds neither a slot nor memory meanwhile.
   */
  async #trySuspend(active: ActiveJob): Promise<void> {
    active.suspendTimer = undefined;
    const { controller } = active;
    if (controller.signal.aborted || active.runSignal?.aborted || !active.waitingOn.size) return;
    const waits = [...active.waitingOn.values()].reduce((sum, count) => sum + count, 0);
    // Something else is still under way (a tool of its own, a call not yet sent to a child): look again.
    if (active.pending.size !== waits) {
      active.suspendTimer = setTimeout(() => void this.#trySuspend(active), this.#suspendAfterMs);
      return;
    }
    const children = [...active.waitingOn.keys()];
    const setAside = await this.#parts.jobs.suspend(active.job, children).catch(() => false);
    if (!setAside) {
      // Its children have ended (they are being read) or the job is no longer this worker's.
      return;
    }
    controller.abort(new JobSetAside(`waiting on ${children.length} sub-agent run(s)`));
    this.onSetAside?.(active.job, children.length);
  }

  /**
   * A stop from any process: the tree (`root`) or the one run (`run`) it names stops here; a run a person
   * stopped `alone` ends with what it had done, for its parent to go on with (RunStopped); a background
   * run whose parent `ended` says so (ParentEnded).
   */
  #stopHeard(payload: string): void {
    let stop: { root?: string; run?: string; reason?: string; alone?: boolean; ended?: boolean };
    try {
      stop = JSON.parse(payload);
    } catch {
      return;
    }
    const message = stop.reason ?? 'stopped';
    const reason = stop.alone
      ? new RunStopped(message)
      : stop.ended
        ? new ParentEnded(message)
        : new Error(message);
    if (stop.root) this.#stopped.set(stop.root, reason);
    if (stop.run) this.#stopped.set(stop.run, reason);
    // Remembered for jobs of the tree taken later; a worker forgets the oldest beyond a few hundred.
    for (const key of [...this.#stopped.keys()].slice(0, Math.max(0, this.#stopped.size - 500)))
      this.#stopped.delete(key);
    for (const active of this.#active.values()) {
      if (active.rootRunId === stop.root || active.runId === stop.run) active.controller.abort(reason);
    }
  }

  /**
   * Jobs that failed on every try: each one's run ends `error` with the reason, so the tree, the CLI and
   * the page say why; the parent waiting on it is told by the queue.
   */
  async #settleDead(): Promise<void> {
    const { jobs, store } = this.#parts;
    for (const dead of await jobs.takeDead(10)) {
      const message = `Failed on every worker that took it: ${dead.error}`;
      const place = idsOf(dead.kind, dead.data);
      // A tree's answer is stored first, with the events that close it, then they are: whoever sees
      // the tree end finds its answer.
      const closing = await closingOf(store.runs, place, 'error', message);
      if (dead.kind === 'tree') await storeTreeAnswer(this.#parts, dead.data as TreeJobData, closing);
      if (closing) await recordClosing(store.runs, closing);
      // A tree that failed before its root began still gets a run, saying why, whose journal a retry
      // (`cadre queue retry`) goes on from.
      if (!closing && dead.kind === 'tree' && !(await store.runs.getRunTree(place.userId, place.rootRunId))) {
        const tree = dead.data as TreeJobData;
        await recordUnstartedRoot(store.runs, { ...tree, status: 'error', summary: message });
        await store.journal.begin(tree.journalId, tree.rootRunId, tree.userId, tree.spec);
        // Its session says so too, as for any tree that ended (a retry's answer is stored beside it).
        await storeTreeAnswer(this.#parts, tree);
      }
      await jobs.settleDead(dead, parentJob(dead.kind, dead.data));
    }
  }
}

/** Stopping the worker: the job goes back to the queue rather than ending `cancelled`. */
class WorkerStopping extends RunHandedOff {
  override name = 'WorkerStopping';
}

/** The job was set aside while its run waits on children: it ends here, and goes on where it is taken again. */
class JobSetAside extends RunHandedOff {
  override name = 'JobSetAside';
}

/** The job was taken from this worker (judged gone while it was not): it stops here, unsettled. */
class JobTaken extends RunHandedOff {
  override name = 'JobTaken';
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
