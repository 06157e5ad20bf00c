import { randomUUID } from 'node:crypto';
import { UserError } from '../core/errors.ts';
import type { RunTree } from '../core/run-tree.ts';
import type { RunSummary, StoredEvent } from '../store/store.ts';
import type { CadreParts } from './cadre-parts.ts';
import { forgetTreeJobs, treeJobKey } from './jobs/forget-jobs.ts';
import { type PricedRunTree, priceTree } from './pricing.ts';
import { attachTree, stopTree } from './trees.ts';

/** A user's run trees: list, read, follow live, stop. Someone else's run is "no such run". */
export class RunsUseCases {
  #parts: CadreParts;

  constructor(parts: CadreParts) {
    this.#parts = parts;
  }

  /** Root runs, newest first. */
  list(userId: string, options: { limit?: number } = {}): Promise<RunSummary[]> {
    return this.#parts.store.runs.listRuns(userId, options);
  }

  /**
   * Every run of the caller's that is running now, at any depth (a tree's root first, then its running
   * runs below it, depth first), each marked `background` when it runs in the background. Runs of
   * processes that died are closed first, so what is listed is really running.
   */
  async running(userId: string): Promise<RunningRun[]> {
    const { runs } = this.#parts.store;
    await runs.markInterrupted();
    const roots = await runs.listRuns(userId, { status: 'running', limit: 1_000 });
    const running: RunningRun[] = [];
    const visit = (run: RunTree, rootId: string) => {
      if (run.status === 'running')
        running.push({
          id: run.id,
          parentId: run.parentId,
          rootId,
          agent: run.agent,
          task: run.task,
          startedAt: run.startedAt,
          ...(run.background ? { background: true as const } : {}),
        });
      for (const child of run.children) visit(child, rootId);
    };
    for (const root of roots) {
      const tree = await runs.getRunTree(userId, root.id);
      if (tree) visit(tree, tree.id);
    }
    return running;
  }

  /** The run tree JSON of a root run, or of a child's subtree; `UserError('unknown_run')` otherwise. */
  async get(userId: string, runId: string): Promise<PricedRunTree> {
    const tree = await this.#parts.store.runs.getRunTree(userId, runId);
    if (!tree) throw unknownRun(runId);
    return priceTree(tree, this.#parts.config.pricing);
  }

  /** The events of a tree stored so far (a snapshot: nothing is waited for), for a report of it. */
  async storedEvents(userId: string, runId: string): Promise<StoredEvent[]> {
    const rootRunId = await this.#parts.store.runs.rootOf(userId, runId);
    if (!rootRunId) throw unknownRun(runId);
    return this.#parts.store.runs.events(userId, rootRunId);
  }

  /** `follow`, refused at the first read instead (for readers that start nothing before it). */
  async *events(
    userId: string,
    runId: string,
    options: { after?: number; signal?: AbortSignal } = {},
  ): AsyncGenerator<StoredEvent> {
    yield* await this.follow(userId, runId, options);
  }

  /**
   * The events of the tree that `runId` belongs to, after the cursor `after`: stored ones, then live ones
   * while the tree runs, in this process or in another on the same store, until it ends. The cursor of
   * each event is what a reader sends back to resume (SSE's `Last-Event-ID`). A run that is not the
   * caller's is refused now rather than at the first read, so a reader following a live tree can start
   * its stream before the tree's next event (which may be minutes away).
   */
  async follow(
    userId: string,
    runId: string,
    options: { after?: number; signal?: AbortSignal } = {},
  ): Promise<AsyncIterable<StoredEvent>> {
    const tree = await attachTree(this.#parts, userId, runId);
    if (!tree) throw unknownRun(runId);
    return tree.events(options);
  }

  /**
   * Stops a run wherever it runs (this process, another cadre process on the same store, a worker). A
   * tree's root stops the whole tree: every run in it ends `cancelled`. Any other run stops alone with
   * its subtree: it ends `cancelled` carrying what it had done (its text so far, its completed tool
   * results and sources) and that the person stopped it, which its parent receives and goes on with.
   * `{ cancelled: false }` for a run of the user's that is not running (not an error).
   */
  async cancel(userId: string, runId: string): Promise<{ cancelled: boolean }> {
    const { live, store } = this.#parts;
    const rootRunId = live.get(userId, runId)?.rootRunId ?? (await store.runs.rootOf(userId, runId));
    if (!rootRunId) {
      // A question still waiting on the queue for a worker: its asker withdraws it (this process, or
      // another told by the queue).
      if (live.cancel(userId, runId) || (await this.#stopWaiting(userId, runId))) return { cancelled: true };
      throw unknownRun(runId);
    }
    if (rootRunId === runId) {
      if (live.cancel(userId, runId)) return { cancelled: true };
      return { cancelled: await stopTree(this.#parts, userId, rootRunId) };
    }
    const reason = 'stopped by the person';
    if (live.stopRun(userId, runId, reason)) return { cancelled: true };
    // A run whose process died is not running any more, and nobody would read the request.
    await store.runs.markInterrupted();
    return { cancelled: await store.runs.requestStop(userId, runId, reason) };
  }

  /**
   * Stops `userId`'s tree `rootRunId`, which no worker has taken yet: its asker, told by the queue's
   * `stop` signal, withdraws it; the stop is also recorded durably, so if its asker has died a worker that
   * takes it later (even one started after this) closes it `cancelled` without running it. False when
   * there is no such waiting tree.
   */
  async #stopWaiting(userId: string, rootRunId: string): Promise<boolean> {
    const { store } = this.#parts;
    if (!store.jobs) return false;
    const jobs = await store.jobs();
    const job = await jobs.find(treeJobKey(rootRunId));
    const owner = (job?.data as { userId?: unknown } | undefined)?.userId;
    if (job?.kind !== 'tree' || job.state !== 'created' || job.tries > 0 || owner !== userId) return false;
    await jobs.stopWaiting(userId, rootRunId, 'stopped by the person');
    return true;
  }

  /**
   * Sends a running run a person's message, wherever it runs (this process, another cadre process on the
   * same store, a worker): it joins the run's conversation at its next model step (after the step and the
   * tool calls under way), is shown in its card as a `run-message` event, and is recorded in the tree's
   * journal there, so a resume adds it at the same step again, once. A run that is not running refuses it
   * (409 `run_not_running`).
   */
  async say(userId: string, runId: string, text: string): Promise<{ messageId: string }> {
    const trimmed = text.trim();
    if (!trimmed) throw new UserError('bad_request', 'The message is empty.');
    if (trimmed.length > MAX_MESSAGE_CHARS)
      throw new UserError('too_large', `A message to a run is at most ${MAX_MESSAGE_CHARS} characters.`, {
        limit: MAX_MESSAGE_CHARS,
      });
    const { live, store } = this.#parts;
    const message = { id: `msg_${randomUUID().replaceAll('-', '').slice(0, 20)}`, text: trimmed };
    if (live.sendMessage(userId, runId, message)) return { messageId: message.id };
    const rootRunId = await store.runs.rootOf(userId, runId);
    if (!rootRunId) throw unknownRun(runId);
    // A run whose process died is not running any more, and nobody would read the message.
    await store.runs.markInterrupted();
    if (await store.runs.sendMessage(userId, runId, message)) return { messageId: message.id };
    throw new UserError('run_not_running', `Run "${runId}" is not running; a message joins a running run.`, {
      runId,
    });
  }

  /** Removes a whole tree by its root's id (a child's id says which tree to remove instead). */
  async remove(userId: string, runId: string): Promise<void> {
    const runs = this.#parts.store.runs;
    if (this.#parts.live.get(userId, runId)) {
      throw new UserError('run_active', `Run "${runId}" is still running; stop it first.`, { runId });
    }
    // A tree still running in another cadre process would lose its record under it while it goes on
    // answering and spending. Runs of processes that died since are closed first, so they can go.
    await runs.markInterrupted();
    const tree = await runs.getRunTree(userId, runId);
    if (tree && tree.parentId === null && tree.status === 'running') {
      throw new UserError(
        'run_active',
        `Run "${runId}" is still running in another cadre process; stop it there (Ctrl-C) or wait for it to end.`,
        { runId },
      );
    }
    if (await runs.removeTree(userId, runId)) {
      if (tree) await forgetTreeJobs(this.#parts.store, [tree]);
      return;
    }
    const root = await runs.rootOf(userId, runId);
    if (root) {
      throw new UserError(
        'not_a_root',
        `Run "${runId}" is a sub-agent run of ${root}; remove the tree: cadre runs rm ${root}`,
        { runId, rootRunId: root },
      );
    }
    throw unknownRun(runId);
  }

  /** Removes the caller's finished trees started more than `olderThanMs` ago; how many went. */
  async prune(userId: string, olderThanMs: number, now = Date.now()): Promise<number> {
    const { runs } = this.#parts.store;
    const before = now - olderThanMs;
    // With a queue (PostgreSQL), the pruned trees' jobs go too: the candidates are read first, and
    // those gone after the prune are forgotten (the store decides which of them it may remove).
    const candidates = this.#parts.store.jobs
      ? (await runs.listRuns(userId, { limit: 100_000 })).filter(
          (run) => run.status !== 'running' && Date.parse(run.startedAt) < before,
        )
      : [];
    const trees = [];
    for (const run of candidates) {
      const tree = await runs.getRunTree(userId, run.id);
      if (tree) trees.push(tree);
    }
    const pruned = await runs.prune(userId, { before });
    const gone = [];
    for (const tree of trees) if (!(await runs.getRunTree(userId, tree.id))) gone.push(tree);
    await forgetTreeJobs(this.#parts.store, gone);
    return pruned;
  }
}

/**
 * For a `say` refused because the run is not running (it ended: a follow-up may continue it), undefined;
 * any other error is thrown again.
 */
export function unlessEnded(error: unknown): undefined {
  if (UserError.isInstance(error) && error.code === 'run_not_running') return undefined;
  throw error;
}

/** A run that is running now (`cadre runs list --running`, `GET /api/runs?running=true`). */
export interface RunningRun {
  id: string;
  parentId: string | null;
  rootId: string;
  agent: string;
  task: string;
  startedAt: string;
  /** Runs in the background: its parent went on, and gets its envelope when it ends. */
  background?: true;
}

/** The longest message a person may send a running run (characters). */
const MAX_MESSAGE_CHARS = 20_000;

function unknownRun(runId: string): UserError {
  return new UserError('unknown_run', `There is no run "${runId}". See: cadre runs list`, { runId });
}
