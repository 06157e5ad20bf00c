import type { BudgetLedger, ChildRunner } from '../../core/child-runs.ts';
import type { TreeJournal } from '../../core/journal.ts';
import type { ConversationKeeper } from '../../core/kept-conversations.ts';
import {
  type ResumePoint,
  resumePointsOf,
  type TreeRecord,
  type TreeSteering,
} from '../../core/tree-record.ts';
import type { JobSignals, TreeLedgerStore, TreeQueue } from '../../store/job-queue.ts';
import type { Store } from '../../store/store.ts';
import type { RunJobData, TreeJobData } from './job-data.ts';
import { queuedChildren } from './queued-children.ts';
import { SharedLedger } from './shared-ledger.ts';

/** Runs `wait` with the job's slot given back, and takes a slot again before the job goes on. */
export type WhileWaiting = <T>(childJobId: string, stop: AbortSignal, wait: () => Promise<T>) => Promise<T>;

/** How a job's runs meet the worker running them: waiting on children, and at each step boundary. */
export interface JobLiveness {
  /** The worker's name, recorded on each run-start and run-resume. */
  worker: string;
  whileWaiting: WhileWaiting;
  atBoundary: () => void;
}

/**
 * The record of a tree run as jobs, as one job of it sees it: the tree's journal in the store, its
 * budget in the database (shared by every worker running a part of it), where each run a retried or
 * set-aside job had begun goes on (worked out from the tree's stored events), the worker's name and step
 * boundaries, and children put on the queue.
 */
export class JobTreeRecord implements TreeRecord {
  readonly rootRunId: string | undefined;
  readonly journal: TreeJournal;
  readonly ledger: BudgetLedger;
  readonly worker: string;
  /** Finished runs' conversations, in the store every worker shares. */
  readonly conversations: ConversationKeeper;
  #points: ReadonlyMap<string, ResumePoint>;
  #liveness: JobLiveness;
  #children: (inProcess: ChildRunner) => ChildRunner;
  #runs: Pick<Store, 'runs'>['runs'];
  /** The job's own run (the tree's root, or the sub-agent run): messages left for it are taken here. */
  #runId: string;
  #steering: TreeSteering | undefined;
  #unwatch: (() => void) | undefined;

  private constructor(parts: {
    rootRunId: string | undefined;
    journal: TreeJournal;
    ledger: BudgetLedger;
    points: ReadonlyMap<string, ResumePoint>;
    liveness: JobLiveness;
    children: (inProcess: ChildRunner) => ChildRunner;
    runs: Pick<Store, 'runs'>['runs'];
    runId: string;
  }) {
    this.rootRunId = parts.rootRunId;
    this.journal = parts.journal;
    this.ledger = parts.ledger;
    this.worker = parts.liveness.worker;
    this.#points = parts.points;
    this.#liveness = parts.liveness;
    this.#children = parts.children;
    this.#runs = parts.runs;
    this.conversations = parts.runs;
    this.#runId = parts.runId;
  }

  /**
   * Opens the record for one job: a `tree` job's root (its run id decided when it was asked) or a `run`
   * job's sub-agent. A job taken before (retried, or set aside and put back) goes on where its runs were.
   */
  static async open(
    parts: {
      store: Pick<Store, 'runs' | 'journal'>;
      jobs: TreeQueue & JobSignals & TreeLedgerStore;
    },
    job: { kind: 'tree' | 'run'; data: TreeJobData | RunJobData; again: boolean },
    liveness: JobLiveness,
  ): Promise<JobTreeRecord> {
    const { store, jobs } = parts;
    const { data } = job;
    const userId = job.kind === 'tree' ? (data as TreeJobData).userId : (data as RunJobData).request.userId;
    const rootRunId =
      job.kind === 'tree' ? (data as TreeJobData).rootRunId : (data as RunJobData).request.rootRunId;
    const [journal, ledger, points] = await Promise.all([
      store.journal.open(data.journalId),
      SharedLedger.open(jobs, rootRunId),
      job.again
        ? store.runs
            .events(userId, rootRunId)
            .then((stored) => resumePointsOf(stored.map(({ event }) => event)))
        : new Map<string, ResumePoint>(),
    ]);
    return new JobTreeRecord({
      runs: store.runs,
      runId: job.kind === 'tree' ? rootRunId : (data as RunJobData).runId,
      rootRunId: job.kind === 'tree' ? rootRunId : undefined,
      journal,
      ledger,
      points,
      liveness,
      children: queuedChildren({
        jobs,
        journalId: data.journalId,
        ...(data.limits ? { limits: data.limits } : {}),
        ...(data.models ? { models: data.models } : {}),
        ...(data.agents ? { agents: data.agents } : {}),
        whileWaiting: liveness.whileWaiting,
      }),
    });
  }

  resumePoint(runId: string): ResumePoint | undefined {
    return this.#points.get(runId);
  }

  atBoundary(): void {
    this.#liveness.atBoundary();
    // The run is under way here (its first step boundary): from now on the messages a person leaves for
    // it (before or while it runs) reach it, woken by the store (NOTIFY) with no timer.
    if (!this.#unwatch && this.#steering) this.#unwatch = this.#runs.watchStops(() => void this.#take());
  }

  steer(steering: TreeSteering): void {
    this.#steering = steering;
  }

  /** Stops taking messages: the job's run has ended here. */
  close(): void {
    this.#unwatch?.();
    this.#unwatch = undefined;
  }

  async #take(): Promise<void> {
    const steering = this.#steering;
    if (!steering) return;
    const messages = await this.#runs.takeMessages([this.#runId]).catch(() => []);
    for (const { runId, ...message } of messages) steering.sendMessage(runId, message);
  }

  childRunner(inProcess: ChildRunner): ChildRunner {
    return this.#children(inProcess);
  }
}
