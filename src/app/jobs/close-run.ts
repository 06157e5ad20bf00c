import type { CadreEvent } from '../../core/events.ts';
import type { RunTree } from '../../core/run-tree.ts';
import type { RunStatus } from '../../core/status.ts';
import { zeroUsage } from '../../core/usage.ts';
import { closingEvents } from '../../store/interruption-events.ts';
import type { ResumeSpec } from '../../store/journal-store.ts';
import type { Store } from '../../store/store.ts';

/**
 * The events that end, with a `run-error` and a `run-finish` saying `message`, a run its job has left open
 * (dead-lettered, or ended without its end stored), so the tree, the CLI and the page say why instead of
 * showing it running; undefined when the run has ended (or is not there). They are worked out apart from
 * being recorded (`recordClosing`) so a tree's answer can be stored with them before they are.
 */
export async function closingOf(
  runs: Store['runs'],
  place: { userId: string; rootRunId: string; runId: string },
  status: RunStatus,
  message: string,
): Promise<CadreEvent[] | undefined> {
  const { userId, rootRunId, runId } = place;
  const tree = userId ? await runs.getRunTree(userId, rootRunId) : undefined;
  const node = tree && findRun(tree, runId);
  if (node?.status !== 'running') return undefined;
  const events = await runs.events(userId, rootRunId);
  const seq =
    events.reduce((last, { event }) => (event.runId === runId ? Math.max(last, event.seq) : last), -1) + 1;
  const at = { rootId: rootRunId, depth: depthOf(events, runId) };
  return [...closingEvents(node, at, seq, Date.now(), status, message)];
}

/** Records the events that close a run (from `closingOf`) and waits until they are stored. */
export async function recordClosing(runs: Store['runs'], closing: readonly CadreEvent[]): Promise<void> {
  for (const event of closing) runs.record(event);
  await runs.flush();
}

/** What the root of a tree stopped before any worker took it says (its asker withdrew it, or a worker saw the stop). */
export function withdrawnSummary(reason: string): string {
  return `Cancelled before any worker took it (${reason}); nothing ran.`;
}

/** What the root of a tree no worker took within `waitTimeoutMs` (`queue.waitTimeoutSeconds`) says. */
export function queueTimeoutMessage(waitTimeoutMs: number): string {
  return `No worker took this question within ${Math.round(waitTimeoutMs / 1000)} s (queue.waitTimeoutSeconds): it was withdrawn from the queue, and nothing of it ran. Start a worker (cadre worker) and ask again.`;
}

/**
 * The root of a tree that never started (withdrawn before any worker took it, or dead-lettered before its
 * root began: an agent or a tool no worker has), recorded as a run that did nothing and ended `status`
 * saying `summary`: the asker's follow ends with it, and the CLI, the page and `cadre runs show` say why.
 */
export async function recordUnstartedRoot(
  runs: Store['runs'],
  tree: { userId: string; rootRunId: string; spec: ResumeSpec; status: RunStatus; summary: string },
): Promise<void> {
  const { userId, rootRunId, spec, status, summary } = tree;
  const time = Date.now();
  const base = { runId: rootRunId, rootRunId, parentRunId: null, depth: 0, agent: spec.agent, time };
  runs.record({
    ...base,
    seq: 0,
    type: 'run-start',
    task: spec.task,
    model: spec.model ?? '',
    userId,
    ...(spec.sessionId ? { sessionId: spec.sessionId } : {}),
  });
  runs.record({ ...base, seq: 1, type: 'run-error', status, message: summary });
  runs.record({
    ...base,
    seq: 2,
    type: 'run-finish',
    status,
    summary,
    usage: zeroUsage(),
    subtreeUsage: zeroUsage(),
  });
  await runs.flush();
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
