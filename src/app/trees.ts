import { UserError } from '../core/errors.ts';
import type { RunOutcome } from '../core/runtime.ts';
import type { Store, StoredEvent } from '../store/store.ts';
import { storedEventPages } from './event-pages.ts';
import { followLive, followStored, stillRunning } from './follow-events.ts';
import type { LiveRuns, TreeSlot } from './live-runs.ts';
import type { TreeExecutor } from './tree-executor.ts';
import { outcomeOf, type TreeHandle } from './tree-handle.ts';

/** What starting and attaching to trees needs: the store (runs and journals), this process's live trees, and where trees run. */
export interface TreeParts {
  store: Pick<Store, 'runs' | 'journal'>;
  live: LiveRuns;
  /** Where trees run: in this process, or as jobs on a queue (chosen once, in create-cadre.ts). */
  executor: TreeExecutor;
}

/** What following, stopping and attaching to trees needs: the stored runs and this process's live trees. */
export interface TreeReaders {
  store: Pick<Store, 'runs'>;
  live: LiveRuns;
}

/**
 * Takes one of the user's slots for a running tree, refusing when `limit` are taken. The check and the
 * taking happen with no await between them, so requests arriving at once cannot all pass the check. A
 * slot not given to an executor (`TreeExecutor.start`) must be released (`slot.end()`).
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

/**
 * Stops the user's tree: here when it runs in this process, else by asking the process that runs it
 * through the store (which wakes it, see `relayStops`). False when it is not running anywhere.
 */
export async function stopTree(
  parts: TreeReaders,
  userId: string,
  rootRunId: string,
  reason = 'stopped by the person',
): Promise<boolean> {
  if (parts.live.cancel(userId, rootRunId, reason)) return true;
  // A tree whose process died is not running any more, and nobody would read the request.
  await parts.store.runs.markInterrupted();
  return parts.store.runs.requestStop(userId, rootRunId, reason);
}

/** Per process's live trees: how many of its trees the relay serves, and how to end it. */
const stopRelays = new WeakMap<LiveRuns, { trees: number; end: () => void }>();

/**
 * While this process runs trees, stops asked of them from elsewhere (a page served by another process,
 * `cadre serve` stopping what a terminal's `cadre chat` is writing) reach them: the store wakes the relay
 * (SQLite: at once in this process, by a watched file across processes; PostgreSQL: NOTIFY), with no
 * timer. Nothing runs for it once the last tree it serves has ended (`endStopRelay`).
 */
export function relayStops(parts: TreeReaders): void {
  const relay = stopRelays.get(parts.live);
  if (relay) {
    relay.trees++;
    return;
  }
  const take = async () => {
    const trees = parts.live.all();
    if (!trees.length) return;
    // Stops of whole trees (their roots) and of single runs in them, stopped alone.
    const stops = await parts.store.runs
      .takeStopRequests(parts.live.runIds())
      .catch(() => new Map<string, string>());
    for (const tree of trees) {
      const reason = stops.get(tree.rootRunId);
      if (reason !== undefined) parts.live.cancel(tree.userId, tree.rootRunId, reason);
    }
    for (const [runId, reason] of stops)
      if (!parts.live.isRoot(runId)) parts.live.stopRun(undefined, runId, reason);
    // Messages a person left for runs of these trees (from another process): each joins its run here.
    const messages = await parts.store.runs.takeMessages(parts.live.runIds()).catch(() => []);
    for (const { runId, ...message } of messages) parts.live.sendMessage(undefined, runId, message);
  };
  stopRelays.set(parts.live, { trees: 1, end: parts.store.runs.watchStops(() => void take()) });
}

/** One tree the relay served has ended; the relay ends with the last. */
export function endStopRelay(parts: Pick<TreeParts, 'live'>): void {
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
  parts: TreeReaders,
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
export async function* treeEvents(
  parts: TreeReaders,
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
