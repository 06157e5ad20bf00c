import { randomUUID } from 'node:crypto';
import type { ApprovalRequest, Approver } from '../../core/approvals.ts';
import { SystemError } from '../../core/errors.ts';
import type { ApprovalRequestEvent, CadreEvent } from '../../core/events.ts';
import { RunProjection } from '../../core/run-view.ts';
import type { RunOutcome } from '../../core/runtime.ts';
import type { RunStatus } from '../../core/status.ts';
import type { JobQueue } from '../../store/job-queue.ts';
import type { ResumeSpec } from '../../store/journal-store.ts';
import type { Store } from '../../store/store.ts';
import type { ApprovalDesk } from '../approvals.ts';
import { followStored } from '../follow-events.ts';
import type { LiveRuns, TreeSlot } from '../live-runs.ts';
import type { Pricing } from '../pricing.ts';
import { storeAnswerOfStoredTree } from '../stored-answers.ts';
import type { ResumeClaim, StartedTree, TreeExecutor, TreeStart } from '../tree-executor.ts';
import { outcomeOf } from '../tree-handle.ts';
import { stopTree, treeEvents } from '../trees.ts';
import {
  closingOf,
  queueTimeoutMessage,
  recordClosing,
  recordUnstartedRoot,
  withdrawnSummary,
} from './close-run.ts';
import { treeJobKey } from './forget-jobs.ts';
import { askedWith, PLAIN_JOB_FORMAT, type TreeAsked, type TreeJobData } from './job-data.ts';
import { SharedApprovals } from './shared-approvals.ts';

/** A tree to put on the queue, and what the process that asked for it does with its events and its end. */
export interface QueuedTreeStart<Result> {
  userId: string;
  slot: TreeSlot;
  signal?: AbortSignal | undefined;
  onEvent?: ((event: CadreEvent) => void) | undefined;
  /** Called once if no worker has taken the tree QUEUED_NOTICE_MS after it was queued. */
  onQueued?: ((rootRunId: string) => void) | undefined;
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
  store: Pick<Store, 'runs' | 'sessions'>;
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
  /** The configured prices of models, for an answer this process stores (a tree withdrawn before it ran). */
  pricing?: Pricing | undefined;
}

/**
 * Trees run as jobs (the PostgreSQL mode): each goes on the queue for any worker to take
 * (`startQueuedTree`), carrying the limits and models the asker composed; this process follows it from
 * the store, and the worker that ends its root stores its answer. Resume claims are held in the database.
 */
export class QueuedTrees implements TreeExecutor {
  #parts: QueuedTreeParts;

  constructor(parts: QueuedTreeParts) {
    this.#parts = parts;
  }

  async start<Result>(start: TreeStart<Result>): Promise<StartedTree<Result>> {
    const parts = this.#parts;
    const { slot, userId, runtime } = start;
    const jobs = await parts.jobs().catch((error: unknown) => {
      slot.end();
      throw error;
    });
    const queued = await startQueuedTree(
      { store: parts.store, live: parts.live, jobs, pricing: parts.pricing },
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
      projection: queued.projection,
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
 * a free slot takes it within milliseconds (a loaded machine may take a second), so only a tree that truly
 * waits is announced.
 */
const QUEUED_NOTICE_MS = 2_000;

/**
 * The asking side of a tree run as a job: the tree goes on the queue under a root run id decided here,
 * and this process follows its events as the worker stores them (NOTIFY wakes it), feeding them to the
 * slot (so this process's live trees hold it like one it runs: pages here attach in memory), to
 * `onEvent`, and to the picture a door draws (`projection`). The answer is not folded here: the worker
 * that ends the root stores it, and `result` waits for the tree's job to end after the root's end (the
 * worker stores the answer before its job ends), so the answer is stored even if this process goes
 * away. A stop here reaches the worker through the store. Resolves with the root's id once the root has
 * started; rejects when the job fails before that (an unknown agent on the worker, a dead letter).
 */
export async function startQueuedTree<Result>(
  parts: {
    store: Pick<Store, 'runs' | 'sessions'>;
    live: LiveRuns;
    jobs: JobQueue;
    pricing?: Pricing | undefined;
  },
  start: QueuedTreeStart<Result>,
): Promise<{ rootRunId: string; result: Promise<Result>; projection: RunProjection }> {
  const { slot, userId, journal } = start;
  const { runs } = parts.store;
  const rootRunId = `run_${randomUUID().replaceAll('-', '').slice(0, 20)}`;
  const data: TreeJobData = {
    format: PLAIN_JOB_FORMAT,
    journalId: journal.id,
    userId,
    rootRunId,
    spec: journal.spec,
    ...start.asked,
    ...(start.rootLimits ? { rootLimits: start.rootLimits } : {}),
    // Carried so a worker that takes it late closes it `timeout` unrun, even if this process is gone.
    ...(start.waitTimeoutMs !== undefined ? { waitTimeoutMs: start.waitTimeoutMs } : {}),
  };
  const key = treeJobKey(rootRunId);
  const tree = { userId, rootRunId, journalId: journal.id, spec: journal.spec };
  // Until its root starts, stopping that id in this process withdraws it (see `onAbort` below).
  slot.waitsAs(rootRunId);
  // What this process writes itself to close the tree (withdrawn; its end never stored): the answer is
  // then stored here, after the closing events, and `result` waits for it.
  let closedHere: Promise<unknown> | undefined;
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
  // Stopped, or waited too long, before any worker took it: it comes off the queue, nothing of it ever
  // runs, and its root is recorded ended saying why (the follow ends with it as with any stopped tree).
  let withdrawing = false;
  const withdrawAs = async (status: RunStatus, summary: string, told?: () => void): Promise<void> => {
    withdrawing = true;
    // Taken meanwhile: the worker has it (a stop reaches it there).
    if (!(await parts.jobs.withdraw('tree', key).catch(() => false))) {
      withdrawing = false;
      return;
    }
    told?.();
    closedHere = (async () => {
      // (Its events are recorded first, at once: an asker told it failed may be about to exit.)
      await recordUnstartedRoot(runs, { userId, rootRunId, spec: journal.spec, status, summary });
      // A stop recorded for it (from another process) is done with.
      await runs.takeStopRequests([rootRunId]).catch(() => {});
      await storeAnswerOfStoredTree(parts.store, tree, { pricing: parts.pricing });
    })();
    await closedHere;
  };
  const withdraw = (reason: string) => withdrawAs('cancelled', withdrawnSummary(reason));
  const onAbort = () => {
    const reason = signal.reason instanceof Error ? signal.reason.message : 'stopped by the person';
    requestStop(reason);
    if (!started) void withdraw(reason).catch(() => {});
  };
  signal.addEventListener('abort', onAbort, { once: true });
  // Said once, if it waits; withdrawn after the wait allowed, its asker told why (`queue_timeout`).
  const queuedNotice = start.onQueued
    ? setTimeout(() => {
        if (!started && !withdrawing) start.onQueued?.(rootRunId);
      }, QUEUED_NOTICE_MS)
    : undefined;
  const waitedMs = start.waitTimeoutMs;
  const expiry =
    waitedMs === undefined
      ? undefined
      : setTimeout(() => {
          if (started || withdrawing) return;
          const message = queueTimeoutMessage(waitedMs);
          void withdrawAs('timeout', message, () =>
            markFailed(new SystemError('queue_timeout', message, { rootRunId })),
          ).catch(() => {});
        }, waitedMs);

  let markStarted: () => void = () => {};
  let markFailed: (error: unknown) => void = () => {};
  const rootStarted = new Promise<void>((resolve, reject) => {
    markStarted = resolve;
    markFailed = reject;
  });
  let rootEnd: CadreEvent | undefined;
  // The tree's job ended for good after the root's end was read: its worker stored the answer first.
  let jobEnded: () => void = () => {};
  const answerStored = new Promise<void>((resolve) => {
    jobEnded = resolve;
  });
  // What a door draws the tree from: a picture of what this process follows (the stored answer is the
  // worker's fold).
  const projection = new RunProjection();
  const follow = (async () => {
    const following = new AbortController();
    // The job is looked at when the queue says it ended (NOTIFY `ended`; `*` after a lost connection),
    // and once now for an end said before this listened: no timer stands in for it.
    let grace: ReturnType<typeof setTimeout> | undefined;
    const look = async () => {
      // (Withdrawn: its cancelled root is being recorded here, and the follow ends with it.)
      if (withdrawing) return;
      const endRead = rootEnd !== undefined;
      const state = await parts.jobs.state('tree', key).catch(() => undefined);
      if (withdrawing) return;
      // Completed, dead-lettered (whose handler stores the answer before the root's end) or gone.
      if (endRead && state && state.state !== 'waiting' && state.state !== 'active') jobEnded();
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
        closedHere = (async () => {
          const place = { userId, rootRunId, runId: rootRunId };
          const message = "Interrupted: its worker ended the tree's job without storing the run's end.";
          const closing = await closingOf(runs, place, 'interrupted', message);
          if (!closing) return;
          await storeAnswerOfStoredTree(parts.store, tree, { pricing: parts.pricing, closing });
          await recordClosing(runs, closing);
        })().catch(() => {});
      }, JOB_END_GRACE_MS);
      grace.unref?.();
    };
    const jobId = parts.jobs.jobId(key);
    const unlisten = await parts.jobs.listen('ended', (payload) => {
      if (payload === jobId || payload === '*') void look();
    });
    // Stopped from another process before any worker took it (`Runs.cancel` there): withdrawn here.
    const unlistenStop = await parts.jobs.listen('stop', (payload) => {
      if (started || withdrawing) return;
      const stop = parseStop(payload);
      if (stop?.root === rootRunId) void withdraw(stop.reason ?? 'stopped by the person').catch(() => {});
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
        projection.apply(event);
        start.onEvent?.(event);
        if (event.runId === rootRunId && event.type === 'run-finish') {
          // Shown to followers once the answer is stored (its job ended, `finish` done): whoever sees the
          // tree end reads it in the session. (The caller's own listener has it in order.)
          rootEnd = event;
          continue;
        }
        slot.observe(event);
        if (event.runId === rootRunId && event.type === 'run-start') markStarted();
      }
      // The job's end may have been said before the root's end was read: looked at once more now.
      if (rootEnd && !closedHere && journal.spec.sessionId) {
        void look();
        await answerStored;
      }
    } finally {
      unlisten();
      unlistenStop();
      clearTimeout(grace);
      clearTimeout(queuedNotice);
      clearTimeout(expiry);
      signal.removeEventListener('abort', onAbort);
    }
  })();
  const result = follow
    .then(async () => {
      await closedHere;
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
  return { rootRunId, result, projection };
}

/** A `stop` signal's payload (see TreeWorker), or undefined when it is not one. */
function parseStop(payload: string): { root?: string; reason?: string } | undefined {
  try {
    const parsed = JSON.parse(payload) as unknown;
    return parsed && typeof parsed === 'object' ? (parsed as { root?: string; reason?: string }) : undefined;
  } catch {
    return undefined;
  }
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
