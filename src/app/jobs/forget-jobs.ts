import type { RunTree } from '../../core/run-tree.ts';
import type { Store } from '../../store/store.ts';

/** The key a tree's job is enqueued under. */
export function treeJobKey(rootRunId: string): string {
  return `tree:${rootRunId}`;
}

/** The key a sub-agent run's job is enqueued under. */
export function runJobKey(runId: string): string {
  return `run:${runId}`;
}

/**
 * Deletes the queue's jobs of these stored trees (PostgreSQL mode: pg-boss keeps a job's payload, the
 * question and its history, and a sub-agent's output for days after it ends). Called when the person
 * removes the trees or their session, so what they deleted is gone from the queue too.
 */
export async function forgetTreeJobs(store: Pick<Store, 'jobs'>, trees: readonly RunTree[]): Promise<void> {
  if (!store.jobs || !trees.length) return;
  const keys: Array<{ kind: 'tree' | 'run'; key: string }> = [];
  const visit = (run: RunTree) => {
    for (const child of run.children) {
      keys.push({ kind: 'run', key: runJobKey(child.id) });
      visit(child);
    }
  };
  for (const tree of trees) {
    keys.push({ kind: 'tree', key: treeJobKey(tree.id) });
    visit(tree);
  }
  await (await store.jobs()).forget(keys);
}
