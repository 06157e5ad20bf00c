import type { CadreEvent } from './events.ts';
import { RunProjection, type RunTree } from './run-view.ts';
import { addUsage, type Usage } from './usage.ts';

export type { RunTree, ToolCallRecord } from './run-view.ts';

/**
 * The run tree JSON read from the projector (`RunProjection`, run-view.ts): live views and stored runs use
 * the same fold, so a tree read back from the store is exactly the tree the CLI printed. Kept under this
 * name for the callers (and the package's users) that build trees from events.
 */
export class RunTreeBuilder {
  readonly projection = new RunProjection();

  apply(event: CadreEvent): void {
    this.projection.apply(event);
  }

  /** The tree under `runId`, as it is now (a new object on each call). */
  get(runId: string): RunTree | undefined {
    return this.projection.tree(runId);
  }

  roots(): RunTree[] {
    return this.projection.roots().flatMap((id) => this.projection.tree(id) ?? []);
  }
}

/** Builds the tree rooted at `rootId` from its events (in any order of runs, each run's own in seq order). */
export function buildRunTree(events: Iterable<CadreEvent>, rootId?: string): RunTree | undefined {
  const projection = new RunProjection();
  for (const event of events) projection.apply(event);
  return projection.tree(rootId);
}

/** Own usage of every run in a tree, summed; equals the root's subtree usage when every run finished. */
export function sumTreeUsage(tree: RunTree): Usage {
  return addUsage(tree.usage, ...tree.children.map(sumTreeUsage));
}
