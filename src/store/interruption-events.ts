import type { CadreEvent } from '../core/events.ts';
import { type RunTree, sumTreeUsage } from '../core/run-tree.ts';
import type { RunStatus } from '../core/status.ts';

/** Why a run whose process died was closed. */
export function interruptedMessage(pid: number, host: string): string {
  return `Interrupted: the process running it (pid ${pid} on ${host}) ended before it finished.`;
}

/**
 * The events that end a run nothing is running any more (its process died, its job failed on every try):
 * a `run-error` with `message` and a `run-finish` with `status` and the usage its finished steps recorded.
 */
export function closingEvents(
  node: RunTree,
  place: { depth: number; rootId: string },
  seq: number,
  time: number,
  status: RunStatus,
  message: string,
): CadreEvent[] {
  const base = {
    runId: node.id,
    parentRunId: node.parentId,
    rootRunId: place.rootId,
    depth: place.depth,
    agent: node.agent,
    time,
  };
  return [
    { ...base, seq, type: 'run-error', status, message },
    {
      ...base,
      seq: seq + 1,
      type: 'run-finish',
      status,
      summary: node.summary || message,
      usage: node.usage,
      subtreeUsage: sumTreeUsage(node),
    },
  ];
}
