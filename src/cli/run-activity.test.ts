import { describe, expect, it } from 'vitest';
import { type CadreEvent, RunProjection } from '../core/index.ts';
import type { RunTree } from '../core/run-tree.ts';
import { retryNotice } from './run-activity.ts';
import { renderTree } from './tree-view.ts';

const base = { parentRunId: null, rootRunId: 'root', depth: 0, agent: 'main', seq: 0, time: 0 };

describe('a retry in the live tree', () => {
  it('says the provider is busy, which attempt of how many and why, under the run, until its next event', () => {
    const projection = new RunProjection();
    const retry: CadreEvent = {
      ...base,
      runId: 'root',
      type: 'model-retry',
      attempt: 2,
      maxAttempts: 4,
      delayMs: 1500,
      reason: 'HTTP 529: overloaded',
    };
    projection.apply(retry);
    const tree: RunTree = {
      id: 'root',
      parentId: null,
      agent: 'main',
      task: 'Hi',
      status: 'running',
      summary: '',
      model: 'm:x',
      turns: 0,
      startedAt: '2026-01-01T00:00:00.000Z',
      endedAt: null,
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      subtreeUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      toolCalls: [],
      children: [],
    };
    const lines = renderTree(tree, Date.parse('2026-01-01T00:00:02.000Z'), 120, {
      notice: (runId) => retryNotice(projection.get(runId)),
    });
    expect(lines[1]).toBe('   ↻ the provider is busy, retrying 2/4 in 2s: HTTP 529: overloaded');
    projection.apply({ ...base, seq: 1, runId: 'root', type: 'text-delta', delta: 'Hello' });
    expect(retryNotice(projection.get('root'))).toBeUndefined();
  });
});
