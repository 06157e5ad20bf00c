import type { CadreEvent } from '../core/events.ts';
import { type RunTree, sumTreeUsage } from '../core/run-tree.ts';

/**
 * The events that close a run whose process died: a `run-error` and a `run-finish`, both `interrupted`,
 * with the usage its finished steps recorded, so the rebuilt tree says what happened. Every backend's
 * sweep writes the same ones.
 */
export function interruptionEvents(
  node: RunTree,
  row: { depth: number; owner_pid: number; rootId: string },
  host: string,
  seq: number,
  time: number,
): CadreEvent[] {
  const message = `Interrupted: the process running it (pid ${row.owner_pid} on ${host}) ended before it finished.`;
  const base = {
    runId: node.id,
    parentRunId: node.parentId,
    rootRunId: row.rootId,
    depth: row.depth,
    agent: node.agent,
    time,
  };
  return [
    { ...base, seq, type: 'run-error', status: 'interrupted', message },
    {
      ...base,
      seq: seq + 1,
      type: 'run-finish',
      status: 'interrupted',
      summary: node.summary || message,
      usage: node.usage,
      subtreeUsage: sumTreeUsage(node),
    },
  ];
}
