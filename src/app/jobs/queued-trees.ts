import { randomUUID } from 'node:crypto';
import type { ApprovalRequest, Approver } from '../../core/approvals.ts';
import { SystemError } from '../../core/errors.ts';
import type { ApprovalRequestEvent, CadreEvent } from '../../core/events.ts';
import type { RunOutcome } from '../../core/runtime.ts';
import type { JobQueue } from '../../store/job-queue.ts';
import type { ResumeSpec } from '../../store/journal-store.ts';
import type { Store } from '../../store/store.ts';
import type { ApprovalDesk } from '../approvals.ts';
import { followStored } from '../follow-events.ts';
import type { LiveRuns, TreeSlot } from '../live-runs.ts';
import type { ResumeClaim, TreeExecutor, TreeStart } from '../tree-executor.ts';
import { outcomeOf, type TreeHandle } from '../tree-handle.ts';
import { stopTree, treeEvents } from '../trees.ts';
import { closeRunLeftOpen, recordUnstartedRoot } from './close-run.ts';
import { treeJobKey } from './forget-jobs.ts';
import { askedWith, type TreeAsked, type TreeJobData } from './job-data.ts';
import { SharedApprovals } from './shared-approvals.ts';

/** A tree to put on the queue, and what the process that asked for it does with its events and its end. */
export interface QueuedTreeStart<Result> {
  userId: string;
  slot: TreeSlot;
  signal?: AbortSignal | undefined;
  onEvent?: ((event: CadreEvent) => void) | undefined;
  /** Called once if no worker has taken the tree QUEUED_NOTICE_MS after it was queued. */
  onQueued?: (() => void) | undefined;
  /** How long it may wait for a worker before it is withdrawn and the asker told (none: for ever). */
  waitTimeoutMs?: number | undefined;
  journal: { id: string; spec: ResumeSpec };
  /** What the tree was asked with (limits, models, agents), so any worker runs it as composed here. */
  asked?: TreeAsked | undefined;
  rootLimits?: TreeJobData['rootLimits'] | undefined;
  /** The caller's own approver (a terminal's prompt or flags): it answers the tree's approvals from here. */
  approver?: Approver | undefined;
  approvals?: ApprovalDesk | undefined;
  finish: (outcome: RunOutcome) => Promise<Result>;
}

/** What running trees as jobs needs: the store's runs, this process's live trees, the queue, the approvals desk. */
export interface QueuedTreeParts {
  store: Pick<Store, 'runs'>;
  live: LiveRuns;
  /** Opens the queue when the first tree is asked for (and may start this process's own worker then). */
  jobs: () => Promise<JobQueue>;
  /** Where a queued tree's approvals wait, so a caller's own approver can answer them from here. */
  approvals?: ApprovalDesk | undefined;
  /**
   * How long a tree may wait for a worker to take it before it is withdrawn and its asker told
   * (`queue.waitTimeoutSeconds`); undefined: as long as it takes.
   */
  waitTimeoutMs?: number | undefined;
}

/**
 * Trees run as jobs (the PostgreSQL mode): each goes on the queue for any worker to take
 * (`startQueuedTree`), carrying the limits and models the asker composed; this process follows it from
 * the store. Resume claims are held in the database.
 */
export class QueuedTrees implements TreeExecutor {
  #parts: QueuedTreeParts;

  constructor(parts: QueuedTreeParts) {
    this.#parts = parts;
  }

  async start<Result>(start: TreeStart<Result>): Promise<TreeHandle<Result>> {
    const parts = this.#parts;
    const { slot, userId, runtime } = start;
    const jobs = await parts.jobs().catch((error: unknown) => {
      slot.end();
      throw error;
    });
    const queued = await startQueuedTree(
      { store: parts.store, live: parts.live, jobs },
      {
        userId,
        slot,
        signal: start.signal,
        onEvent: start.onEvent,
        onQueued: start.onQueued,
        waitTimeoutMs: parts.waitTimeoutMs,
        journal: start.journal,
        // The limits, models and agents this asker composed, not the worker's config.
        asked: askedWith(runtime),
        rootLimits: start.rootLimits,
        approver: start.approver,
        approvals: parts.approvals,
        finish: start.finish,
      },
    );
    return {
      rootRunId: queued.rootRunId,
      events: (options) => treeEvents(parts, userId, queued.rootRunId, options),
      result: queued.result,
      cancel: (reason) => stopTree(parts, userId, queued.rootRunId, reason),
    };
  }

  /** A claim held in the database: let go by `release`, or by the database if this process dies. */
  async claimResume(journalId: string): Promise<ResumeClaim> {
    const claimed = await (await this.#parts.jobs()).claim(`resume:${journalId}`);
    return 'release' in claimed ? { release: () => void claimed.release() } : { heldBy: claimed.heldBy.pid };
  }
}

/** How long the root's end may take to arrive after its job ended before the root is closed here. */
const JOB_END_GRACE_MS = 3_000;
/**
 * How long a tree waits on the queue before its asker is told no worker has taken it yet: a worker with
 * a free slot takes it within milliseconds, so only a tree that truly waits is announced.
 */
const QUEUED_NOTICE_MS = 1_000;

/**
 * The asking side of a tree run as a job: the tree goes on the queue under a root run id decided here,
 * and this process follows its events as the worker stores them (NOTIFY wakes it), feeding them to the
 * slot (so this process's live trees hold it like one it runs: pages here attach in memory) and to
 * `onEvent`. A stop here reaches the worker through the store. Resolves with the root's id once the root
 * has started; rejects when the job fails before that (an unknown agent on the worker, a dead letter).
 */
export async function startQueuedTree<Result>(
  parts: { store: Pick<Store, 'runs'>; live: LiveRuns; jobs: JobQueue },
  start: QueuedTreeStart<Result>,
): Promise<{ rootRunId: string; result: Promise<Result> }> {
  const { slot, userId, journal } = start;
  const { runs } = parts.store;
  const rootRunId = `run_${randomUUID().replaceAll('-', '').slice(0, 20)}`;
  const data: TreeJobData = {
    journalId: journal.id,
    userId,
    rootRunId,
    spec: journal.spec,
    ...start.asked,
    ...(start.rootLimits ? { rootLimits: start.rootLimits } : {}),
  };
  const key = treeJobKey(rootRunId);
  try {
    await parts.jobs.enqueue('tree', key, data);
  } catch (error) {
    slot.end();
    throw error;
  }
  const signal = start.signal ? AbortSignal.any([start.signal, slot.signal]) : slot.signal;
  let started = false;
  // A stop before the root has started is sent again once it has (the worker may not hold it yet).
  let stopWanted: string | undefined;
  const requestStop = (reason: string) => {
    stopWanted = reason;
    if (started) void runs.requestStop(userId, rootRunId, reason).catch(() => {});
  };
  // Stopped before any worker took it: it comes off the queue, and nothing of it ever runs.
  let withdrawing = false;
  const withdraw = async (reason: string) => {
    withdrawing = true;
    const withdrawn = await parts.jobs.withdraw('tree', key).catch(() => false);
    // Recorded as a cancelled run that did nothing: the follow ends with it as with any stopped tree.
    if (withdrawn)
      await recordUnstartedRoot(runs, {
        userId,
        rootRunId,
        spec: journal.spec,
        status: 'cancelled',
        summary: `Cancelled before any worker took it (${reason}); nothing ran.`,
      });
    // Taken meanwhile: the worker has it, and the stop reaches it there.
    else withdrawing = false;
  };
  const onAbort = () => {
    const reason = signal.reason instanceof Error ? signal.reason.message : 'stopped by the person';
    requestStop(reason);
    if (!started) void withdraw(reason).catch(() => {});
  };
  signal.addEventListener('abort', onAbort, { once: true });
  // Said once, if it waits; withdrawn after the wait allowed (its asker told why: `queue_timeout`).
  const queuedNotice = start.onQueued
    ? setTimeout(() => {
        if (!started && !withdrawing) start.onQueued?.();
      }, QUEUED_NOTICE_MS)
    : undefined;
  const expiry =
    start.waitTimeoutMs === undefined
      ? undefined
      : setTimeout(() => void expire(start.waitTimeoutMs!).catch(() => {}), start.waitTimeoutMs);
  const expire = async (waitedMs: number) => {
    if (started || withdrawing) return;
    withdrawing = true;
    if (!(await parts.jobs.withdraw('tree', key).catch(() => false))) {
      // Taken meanwhile: it runs.
      withdrawing = false;
      return;
    }
    const message = `No worker took this question within ${Math.round(waitedMs / 1000)} s (queue.waitTimeoutSeconds): it was withdrawn from the queue, and nothing of it ran. Start a worker (cadre worker) and ask again.`;
    markFailed(new SystemError('queue_timeout', message, { rootRunId }));
    // Its run says so too (`cadre runs list`, the page); the follow ends with it.
    await recordUnstartedRoot(runs, {
      userId,
      rootRunId,
      spec: journal.spec,
      status: 'timeout',
      summary: message,
    });
  };

  let markStarted: () => void = () => {};
  let markFailed: (error: unknown) => void = () => {};
  const rootStarted = new Promise<void>((resolve, reject) => {
    markStarted = resolve;
    markFailed = reject;
  });
  let rootEnd: CadreEvent | undefined;
  const follow = (async () => {
    const following = new AbortController();
    // The job is looked at when the queue says it ended (NOTIFY `ended`; `*` after a lost connection),
    // and once now for an end said before this listened: no timer stands in for it.
    let grace: ReturnType<typeof setTimeout> | undefined;
    const look = async () => {
      // (Withdrawn: its cancelled root is being recorded here, and the follow ends with it.)
      if (withdrawing) return;
      const state = await parts.jobs.state('tree', key).catch(() => undefined);
      if (withdrawing) return;
      if (!started) {
        if (state?.state === 'failed' || state?.state === 'missing') {
          const why = state.state === 'failed' ? state.error : 'its job is gone from the queue';
          markFailed(
            new SystemError('job_failed', `The run could not start on a worker: ${why}`, { rootRunId }),
          );
          following.abort();
        }
        if (state?.state !== 'completed') return;
      }
      // A backstop: the tree's job ended (its worker done with it) but its root's end may never reach the
      // store. It is given JOB_END_GRACE_MS to arrive; then the root is closed with what is known. (A
      // dead-lettered job is a worker's to close, with why it failed.)
      if (state?.state !== 'completed' || grace) return;
      grace = setTimeout(() => {
        // Interrupted, not failed: its journal holds what it did, for `cadre runs resume`.
        void closeRunLeftOpen(
          runs,
          { userId, rootRunId, runId: rootRunId },
          'interrupted',
          "Interrupted: its worker ended the tree's job without storing the run's end.",
        ).catch(() => false);
      }, JOB_END_GRACE_MS);
      grace.unref?.();
    };
    const jobId = parts.jobs.jobId(key);
    const unlisten = await parts.jobs.listen('ended', (payload) => {
      if (payload === jobId || payload === '*') void look();
    });
    void look();
    try {
      // Not given the caller's signal: a stopped tree's last events are still read, up to its end.
      for await (const { event } of followStored(runs, userId, rootRunId, {
        signal: following.signal,
        stateEveryMs: Number.POSITIVE_INFINITY,
      })) {
        if (!started && event.type === 'run-start' && event.parentRunId === null) {
          started = true;
          clearTimeout(queuedNotice);
          clearTimeout(expiry);
          if (stopWanted !== undefined) requestStop(stopWanted);
        }
        if (event.type === 'approval-request' && start.approver && start.approvals instanceof SharedApprovals)
          void start.approvals
            .relay(start.approver, approvalRequestOf(event, userId, journal.spec.sessionId), signal)
            .catch(() => {});
        start.onEvent?.(event);
        if (event.runId === rootRunId && event.type === 'run-finish') {
          // Shown to followers once the answer is stored (`finish`): whoever sees the tree end reads it
          // in the session. (The caller's own listener has it in order: the answer is built from it.)
          rootEnd = event;
          continue;
        }
        slot.observe(event);
        if (event.runId === rootRunId && event.type === 'run-start') markStarted();
      }
    } finally {
      unlisten();
      clearTimeout(grace);
      clearTimeout(queuedNotice);
      clearTimeout(expiry);
      signal.removeEventListener('abort', onAbort);
    }
  })();
  const result = follow
    .then(async () => {
      const tree = await runs.getRunTree(userId, rootRunId);
      if (!tree) throw new SystemError('job_failed', `The run ${rootRunId} never started.`, { rootRunId });
      return start.finish(outcomeOf(tree));
    })
    .finally(async () => {
      await runs.flush();
      if (rootEnd) slot.observe(rootEnd);
      slot.end();
    });
  result.catch(() => {});
  follow.catch(markFailed);
  await rootStarted;
  return { rootRunId, result };
}

/** The approval request an `approval-request` event stands for, as an approver is asked it. */
function approvalRequestOf(
  event: ApprovalRequestEvent,
  userId: string,
  sessionId: string | undefined,
): ApprovalRequest {
  return {
    approvalId: event.approvalId,
    runId: event.runId,
    toolCallId: event.toolCallId,
    tool: event.name,
    input: event.input,
    path: event.path,
    userId,
    sessionId,
    expiresAt: event.expiresAt,
    // A call that may have run already (a resumed run) says so to the person deciding.
    ...(event.warning ? { warning: event.warning } : {}),
  };
}
