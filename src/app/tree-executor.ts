import type { Approver } from '../core/approvals.ts';
import type { EventListener } from '../core/events.ts';
import type { RunProjection } from '../core/run-view.ts';
import type { RunOutcome, RunRequest, Runtime } from '../core/runtime.ts';
import type { ResumeSpec } from '../store/journal-store.ts';
import type { TreeSlot } from './live-runs.ts';
import type { TreeHandle } from './tree-handle.ts';

/**
 * Where a process's trees run, chosen once when Cadre is composed: in this process
 * (`InProcessTrees`, embedded) or as jobs any worker takes (`QueuedTrees`, PostgreSQL). Both take the
 * same description of a tree and give the same handle; test/executor/tree-executor-contract.ts holds
 * both to one contract.
 */
export interface TreeExecutor {
  /**
   * Starts a tree. Resolves with its handle as soon as its root has started; a tree refused before that
   * (no model, an unknown agent) rejects here, so a door can answer with a plain error before it streams
   * anything. The slot is freed once the tree has ended and `finish` has run (or at once if it is refused).
   * A tree whose spec names a session answers there: its answer is stored where the tree runs (here, or
   * by the worker that ends its root), whether or not the asker still listens, before `result` resolves.
   */
  start<Result>(start: TreeStart<Result>): Promise<StartedTree<Result>>;
  /**
   * Claims going on from journal `journalId` across every process that could (a lock file in
   * CADRE_HOME here; the database when runs are jobs): held by another, it says by whom.
   */
  claimResume(journalId: string): Promise<ResumeClaim>;
}

/** A started tree: its handle, and its runs as this process has folded their events so far. */
export interface StartedTree<Result> extends TreeHandle<Result> {
  /**
   * The tree's runs as its events have told them so far, folded before any reader of `events` sees an
   * event: where the tree runs here, the fold its answer is stored from; as jobs, the asker's picture of
   * what it follows (a door draws the tree from it rather than folding the events again).
   */
  projection: Pick<RunProjection, 'get' | 'children' | 'roots' | 'tree'>;
}

/** A claim on resuming one journal: released when the attempt has ended, or held by another process. */
export type ResumeClaim = { release: () => void } | { heldBy: number };

/** One tree to run, as the asker composed it: the same for every executor. */
export interface TreeStart<Result> {
  userId: string;
  /** The slot taken for this tree (`reserveTree`). */
  slot: TreeSlot;
  /** The caller's own stop (a closed terminal, a caller gone away): it cancels the whole tree. */
  signal?: AbortSignal | undefined;
  /** Every event of the tree, in order, as it happens, before any reader of `events` sees it. */
  onEvent?: EventListener | undefined;
  /**
   * Called once when the tree waits on a queue that no worker has taken it from yet (runs as jobs, after
   * a moment), so a door can say so instead of saying nothing; never for a tree run in this process. It
   * is given the root id the tree will have: stopping that id (`Cadre.runs.cancel`) withdraws it.
   */
  onQueued?: ((rootRunId: string) => void) | undefined;
  /**
   * The tree's journal: a new one under `id`, or with `resume` the journal of an interrupted attempt,
   * whose committed steps are reused. `spec` is what the tree is (its agent, task, history…), and what a
   * later resume needs to start the root again.
   */
  journal: { id: string; spec: ResumeSpec; resume?: boolean };
  /** The runtime the asker composed (its limits, models and agents): the tree runs on it, here or on a worker. */
  runtime: Runtime;
  /** Who decides the tree's approvals (a terminal's prompt or flags), over the runtime's approver. */
  approver?: Approver | undefined;
  /** Limits of the root run only (`--max-turns`, `--timeout`). */
  rootLimits?: RunRequest['rootLimits'];
  /** Done once the tree has ended (and its answer is stored), before its slot is freed. */
  finish: (outcome: RunOutcome) => Promise<Result>;
}

/** The run request a journal's spec stands for: how a tree is started, the first time or on resume. */
export function runRequestOf(spec: ResumeSpec): RunRequest {
  return {
    agent: spec.agent,
    task: spec.task,
    history: spec.history,
    inputs: spec.inputs,
    sessionId: spec.sessionId,
    model: spec.model,
    prefetch: spec.prefetch,
    freshResults: spec.freshResults,
    continues: spec.continues,
  };
}
