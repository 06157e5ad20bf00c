import { UserError } from '../core/errors.ts';
import type { CadreEvent, EventListener } from '../core/events.ts';
import type { RunOutcome, Runtime } from '../core/runtime.ts';
import type { TreeRecord } from '../core/tree-record.ts';
import type { JobQueue } from '../store/job-queue.ts';
import type { ResumeSpec } from '../store/journal-store.ts';
import type { Store, StoredEvent } from '../store/store.ts';
import type { ApprovalDesk } from './approvals.ts';
import { storedEventPages } from './event-pages.ts';
import { followLive, followStored, stillRunning } from './follow-events.ts';
import { askedWith } from './jobs/job-data.ts';
import { type QueuedTreeStart, startQueuedTree } from './jobs/queued-trees.ts';
import type { LiveRuns, TreeSlot } from './live-runs.ts';
import { outcomeOf, type TreeHandle } from './tree-handle.ts';
import { EmbeddedTreeRecord } from './tree-records.ts';

/** What starting and attaching to trees needs: the store (runs and journals) and this process's live trees. */
export interface TreeParts {
  store: Pick<Store, 'runs' | 'journal'>;
  live: LiveRuns;
  /** Runs as jobs (the PostgreSQL mode): trees go on this queue for workers instead of running here. */
  jobs?: (() => Promise<JobQueue>) | undefined;
  /** Where a queued tree's approvals wait, so a caller's own approver can answer them from here. */
  approvals?: ApprovalDesk;
}

/**
 * Takes one of the user's slots for a running tree, refusing when `limit` are taken. The check and the
 * taking happen with no await between them, so requests arriving at once cannot all pass the check. A
 * slot not given to `startTree` must be released (`slot.end()`).
 */
export function reserveTree(live: LiveRuns, userId: string, limit: number | undefined): TreeSlot {
  if (limit !== undefined && live.countFor(userId) >= limit) {
    throw new UserError(
      'too_many_chats',
      `At most ${limit} answers may run at once for one user; wait for one to finish or stop it.`,
      { limit },
    );
  }
  return live.begin(userId);
}

export interface TreeStart<Result> {
  userId: string;
  /** The slot taken for this tree (`reserveTree`). */
  slot: TreeSlot;
  /** The caller's own stop (a closed terminal, a caller gone away): it cancels the whole tree. */
  signal?: AbortSignal;
  /** Every event of the tree, in order, as it happens, before any reader of `events` sees it. */
  onEvent?: EventListener;
  /**
   * The tree's journal: a new one under `id`, or with `resume` the journal of an interrupted attempt,
   * whose committed steps are reused. `spec` is what a later resume needs to start the root again.
   */
  journal: { id: string; spec: ResumeSpec; resume?: boolean };
  /** Runs the tree with the lifecycle's signal, listener and journal. */
  run: (hooks: { signal: AbortSignal; onEvent: EventListener; record: TreeRecord }) => Promise<RunOutcome>;
  /** Done once the tree has ended, before its slot is freed (e.g. storing the answer in its session). */
  finish: (outcome: RunOutcome) => Promise<Result>;
  /** The runtime the tree was composed with: a tree run as a job carries its limits, models and agents. */
  runtime: Runtime;
  /** What a worker needs besides the journal's spec when the tree runs as a job (see `run` otherwise). */
  queued?: Pick<QueuedTreeStart<Result>, 'rootLimits' | 'approver'>;
}

/**
 * The one lifecycle of a tree that runs in this process: it is registered with the live trees (so any
 * request can follow or stop it), its caller's signal is linked, every event is observed, its journal is
 * begun with the root's run id, and once it has ended its events are stored before the slot is freed.
 * Resolves with the tree's handle as soon as its root has started; a tree refused before that (no model,
 * an unknown agent) rejects here, so a door can answer with a plain error before it streams anything.
 */
export async function startTree<Result>(
  parts: TreeParts,
  start: TreeStart<Result>,
): Promise<TreeHandle<Result>> {
  const { slot, userId } = start;
  if (parts.jobs) {
    const jobs = await parts.jobs().catch((error: unknown) => {
      slot.end();
      throw error;
    });
    const queued = await startQueuedTree(
      { store: parts.store, live: parts.live, jobs },
      {
        userId,
        slot,
        ...(start.signal ? { signal: start.signal } : {}),
        ...(start.onEvent ? { onEvent: start.onEvent } : {}),
        journal: start.journal,
        asked: askedWith(start.runtime),
        ...start.queued,
        ...(parts.approvals ? { approvals: parts.approvals } : {}),
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
  const signal = start.signal ? AbortSignal.any([start.signal, slot.signal]) : slot.signal;
  const { id: journalId, spec } = start.journal;
  const journal = start.journal.resume
    ? await parts.store.journal.open(journalId).catch((error: unknown) => {
        slot.end();
        throw error;
      })
    : parts.store.journal.create(journalId);
  let started: (rootRunId: string) => void = () => {};
  const rootStarted = new Promise<string>((resolve) => {
    started = resolve;
  });
  const onEvent = (event: CadreEvent) => {
    const isRootStart = event.type === 'run-start' && event.parentRunId === null;
    if (isRootStart) void parts.store.journal.begin(journalId, event.runId, userId, spec);
    start.onEvent?.(event);
    slot.observe(event);
    if (isRootStart) started(event.runId);
  };
  relayStops(parts);
  const record = new EmbeddedTreeRecord(journal);
  const ran = (async () => start.run({ signal, onEvent, record }))();
  const result = ran
    .then((outcome) => start.finish(outcome))
    .finally(async () => {
      await parts.store.runs.flush();
      slot.end();
      endStopRelay(parts);
    });
  // Callers that only stream may never await the result; its failure is theirs to see in the events.
  result.catch(() => {});
  const rootRunId = await Promise.race([rootStarted, ran.then((outcome) => outcome.envelope.runId)]);
  return {
    rootRunId,
    events: (options) => treeEvents(parts, userId, rootRunId, options),
    result,
    cancel: (reason) => stopTree(parts, userId, rootRunId, reason),
  };
}

/**
 * Stops the user's tree: here when it runs in this process, else by asking the process that runs it
 * through the store (which wakes it, see `relayStops`). False when it is not running anywhere.
 */
export async function stopTree(
  parts: TreeParts,
  userId: string,
  rootRunId: string,
  reason = 'stopped by the person',
): Promise<boolean> {
  if (parts.live.cancel(userId, rootRunId, reason)) return true;
  // A tree whose process died is not running any more, and nobody would read the request.
  await parts.store.runs.markInterrupted();
  return parts.store.runs.requestStop(userId, rootRunId, reason);
}

/** How often a process with trees running looks for stops other processes asked, on a store that cannot tell it. */
const STOP_POLL_MS = 250;
/** Per process's live trees: how many of its trees the relay serves, and how to end it. */
const stopRelays = new WeakMap<LiveRuns, { trees: number; end: () => void }>();

/**
 * While this process runs trees, stops asked of them from elsewhere (a page served by another process,
 * `cadre serve` stopping what a terminal's `cadre chat` is writing) reach them: woken by the store when
 * it can tell (SQLite: at once in this process, by a watched file across processes), else looked for
 * every STOP_POLL_MS. Nothing runs for it once the last tree it serves has ended (`endStopRelay`).
 */
function relayStops(parts: TreeParts): void {
  const relay = stopRelays.get(parts.live);
  if (relay) {
    relay.trees++;
    return;
  }
  const take = async () => {
    const trees = parts.live.all();
    if (!trees.length) return;
    const stops = await parts.store.runs
      .takeStopRequests(trees.map((tree) => tree.rootRunId))
      .catch(() => new Map<string, string>());
    for (const tree of trees) {
      const reason = stops.get(tree.rootRunId);
      if (reason !== undefined) parts.live.cancel(tree.userId, tree.rootRunId, reason);
    }
  };
  const { runs } = parts.store;
  if (runs.watchStops) {
    stopRelays.set(parts.live, { trees: 1, end: runs.watchStops(() => void take()) });
    return;
  }
  const timer = setInterval(() => void take(), STOP_POLL_MS);
  // Nothing is waited for by this alone: a process whose work is done exits.
  timer.unref();
  stopRelays.set(parts.live, { trees: 1, end: () => clearInterval(timer) });
}

/** One tree the relay served has ended; the relay ends with the last. */
function endStopRelay(parts: TreeParts): void {
  const relay = stopRelays.get(parts.live);
  if (!relay || --relay.trees > 0) return;
  relay.end();
  stopRelays.delete(parts.live);
}

/**
 * The handle of a tree by any of its run ids, wherever it runs: in this process (its events followed in
 * memory), in another process on the same store (followed as they are stored), or ended (read back). The
 * result is the stored tree once it has ended. Undefined when the user has no such run.
 */
export async function attachTree(
  parts: TreeParts,
  userId: string,
  runId: string,
): Promise<TreeHandle | undefined> {
  const live = parts.live.get(userId, runId);
  const rootRunId = live?.rootRunId ?? (await parts.store.runs.rootOf(userId, runId));
  if (!rootRunId) return undefined;
  let result: Promise<RunOutcome> | undefined;
  return {
    rootRunId,
    events: (options) => treeEvents(parts, userId, rootRunId, options),
    get result() {
      result ??= (async () => {
        const tree = parts.live.get(userId, rootRunId);
        if (tree) await tree.done;
        else
          for await (const _ of treeEvents(parts, userId, rootRunId)) {
            // Read to its end: the tree has ended once its events have.
          }
        const stored = await parts.store.runs.getRunTree(userId, rootRunId);
        if (!stored) throw new UserError('unknown_run', `There is no run "${runId}".`, { runId });
        return outcomeOf(stored);
      })();
      return result;
    },
    cancel: (reason) => stopTree(parts, userId, rootRunId, reason),
  };
}

/**
 * A tree's events after a cursor: followed in memory while it runs in this process, read back from the
 * store and then followed there while it runs in another, read back once when it has ended.
 */
async function* treeEvents(
  parts: TreeParts,
  userId: string,
  rootRunId: string,
  options: { after?: number; signal?: AbortSignal } = {},
): AsyncGenerator<StoredEvent> {
  if (parts.live.get(userId, rootRunId)) {
    // The live tree holds every event from its first, numbered as the store numbers them.
    let after = options.after ?? 0;
    for await (const item of followLive(parts.live, userId, rootRunId, options)) {
      after = item.cursor;
      yield item;
    }
    // The tree ended (or had just ended when it was looked up): its events are stored before it leaves
    // the live trees, so what the follower has not seen is read back.
    if (!options.signal?.aborted)
      yield* storedEventPages(parts.store.runs, userId, rootRunId, { ...options, after });
    return;
  }
  const runs = parts.store.runs;
  let after = options.after ?? 0;
  let ended = false;
  for await (const item of storedEventPages(runs, userId, rootRunId, options)) {
    after = item.cursor;
    if (item.event.type === 'run-finish' && item.event.runId === rootRunId) ended = true;
    yield item;
  }
  if (ended || options.signal?.aborted || !(await stillRunning(runs, userId, rootRunId))) return;
  yield* followStored(runs, userId, rootRunId, { ...options, after });
}
