import type { CadreEvent } from '../../core/events.ts';
import type { RunTree } from '../../core/run-tree.ts';
import type { RunStatus } from '../../core/status.ts';
import { closingEvents } from '../../store/interruption-events.ts';
import type { Store } from '../../store/store.ts';

/**
 * Ends, with a `run-error` and a `run-finish` saying `message`, a run its job has left open (dead-lettered,
 * or ended without its end stored), so the tree, the CLI and the page say why instead of showing it
 * running. Nothing is written when the run has ended (or is not there). Returns whether it closed it.
 */
export async function closeRunLeftOpen(
  runs: Store['runs'],
  place: { userId: string; rootRunId: string; runId: string },
  status: RunStatus,
  message: string,
): Promise<boolean> {
  const { userId, rootRunId, runId } = place;
  const tree = userId ? await runs.getRunTree(userId, rootRunId) : undefined;
  const node = tree && findRun(tree, runId);
  if (node?.status !== 'running') return false;
  const events = await runs.events(userId, rootRunId);
  const seq =
    events.reduce((last, { event }) => (event.runId === runId ? Math.max(last, event.seq) : last), -1) + 1;
  const at = { rootId: rootRunId, depth: depthOf(events, runId) };
  for (const event of closingEvents(node, at, seq, Date.now(), status, message)) runs.record(event);
  await runs.flush();
  return true;
}

/** The run `runId` in `tree` (the tree itself, or a run under it). */
export function findRun(tree: RunTree, runId: string): RunTree | undefined {
  if (tree.id === runId) return tree;
  for (const child of tree.children) {
    const found = findRun(child, runId);
    if (found) return found;
  }
  return undefined;
}

function depthOf(events: Array<{ event: CadreEvent }>, runId: string): number {
  return events.find(({ event }) => event.runId === runId)?.event.depth ?? 0;
}
