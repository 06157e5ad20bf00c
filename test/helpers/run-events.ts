import type { CadreEvent } from '../../src/core/events.ts';

/** Events of one root run `r1` (agent main), for the store's tests: built here once, not per test file. */
export const base = { rootRunId: 'r1', runId: 'r1', parentRunId: null, depth: 0, agent: 'main', time: 1 };

export function runStart(userId = 'local'): CadreEvent {
  return { ...base, seq: 0, type: 'run-start', task: 't', model: 'm:x', userId };
}

export function textDelta(seq: number): CadreEvent {
  return { ...base, seq, type: 'text-delta', delta: `word ${seq} ` };
}

export function toolResult(seq: number, output: unknown = seq): CadreEvent {
  return { ...base, seq, type: 'tool-result', toolCallId: `c${seq}`, name: 'f', ok: true, output, ms: 1 };
}

export function runFinish(seq: number): CadreEvent {
  const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
  return { ...base, seq, type: 'run-finish', status: 'ok', summary: 's', usage, subtreeUsage: usage };
}
