import type { ResultEnvelope } from '../core/envelope.ts';
import type { RunTree } from '../core/run-tree.ts';
import type { RunOutcome } from '../core/runtime.ts';
import type { RunStatus } from '../core/status.ts';
import type { StoredEvent } from '../store/store.ts';

/**
 * One run tree, started here or attached to by its id, as every door holds it: its events from a cursor,
 * its result, and a way to stop it. A door only translates what it reads here (to a terminal, SSE, UI
 * message chunks, OpenAI chunks, MCP progress); none of them keeps its own picture of the run.
 */
export interface TreeHandle<Result = RunOutcome> {
  readonly rootRunId: string;
  /**
   * Every event of the tree after `after` (a cursor: 0 for all of them), in order, live until the tree
   * ends; the cursor of each is what a reader sends back to go on from there.
   */
  events(options?: { after?: number; signal?: AbortSignal }): AsyncIterable<StoredEvent>;
  /** Resolves when the tree has ended and is stored; rejects only for a system fault. */
  readonly result: Promise<Result>;
  /** Stops the whole tree (every run in it ends `cancelled`); false when it was no longer running. */
  cancel(reason?: string): Promise<boolean>;
}

/** A stored tree's outcome, as `Runtime.run` returns it for a tree that ran here. */
export function outcomeOf(tree: RunTree): RunOutcome {
  const envelope: ResultEnvelope = {
    status: tree.status as RunStatus,
    summary: tree.summary,
    usage: tree.usage,
    subtreeUsage: tree.subtreeUsage,
    runId: tree.id,
    ...(tree.data !== undefined ? { data: tree.data } : {}),
    ...(tree.sources ? { sources: tree.sources } : {}),
  };
  return { envelope, tree };
}
