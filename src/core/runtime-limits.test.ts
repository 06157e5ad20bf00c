import { describe, expect, it } from 'vitest';
import { agent, child, setup, whoIs } from '../../test/helpers/runtime-setup.ts';
import { FINAL_ANSWER_PROMPT } from './limits.ts';
import { buildRunTree } from './run-tree.ts';

describe('limits: turns, time, budget and cancellation', () => {
  it('ends a run out of turns with one final call that may call no tool, status max_turns', async () => {
    const { runtime, model } = setup(
      (request) => {
        // Even if the model calls a tool anyway, nothing runs: the final call's tools are declared only.
        if (request.lastUserText === FINAL_ANSWER_PROMPT)
          return { text: 'best effort answer', toolCalls: [{ name: 'echo', input: { text: 'late' } }] };
        return { toolCalls: [{ name: 'echo', input: { text: String(request.index) } }] };
      },
      [agent({ name: 'main', tools: ['echo'], maxTurns: 3 })],
    );
    const { envelope, tree } = await runtime.run({ agent: 'main', task: 'loop' });
    expect(envelope.status).toBe('max_turns');
    expect(envelope.summary).toBe('best effort answer');
    expect(tree.toolCalls).toHaveLength(3);
    expect(model.calls).toHaveLength(4);
    // The history holds tool calls, so the tools stay declared (Anthropic and Gemini refuse it otherwise),
    // with a tool choice of none.
    expect(model.calls[3]!.toolNames).toEqual(['echo']);
    expect(model.calls[3]!.toolChoice).toEqual({ type: 'none' });
    expect(tree.turns).toBe(4);
  });

  it('times a run out and cancels its subtree', async () => {
    const { runtime } = setup(
      (request, who) => {
        if (who === 'main' && request.toolResults.length === 0)
          return { toolCalls: [{ name: 'w', input: { task: 't' } }] };
        if (who === 'w') return { toolCalls: [{ name: 'slow', input: {} }] };
        return { text: 'main went on' };
      },
      [agent({ name: 'main', tools: ['w'], timeout: 0.3 }), agent({ name: 'w', tools: ['slow'] })],
    );
    const started = performance.now();
    const { envelope, tree } = await runtime.run({ agent: 'main', task: 'go' });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(envelope.status).toBe('timeout');
    expect(child(tree).status).toBe('cancelled');
  });

  it('ends a child that times out as timeout while the parent goes on', async () => {
    const { runtime } = setup(
      (request, who) => {
        if (who === 'main' && request.toolResults.length === 0)
          return { toolCalls: [{ name: 'w', input: { task: 't' } }] };
        if (who === 'w') return { toolCalls: [{ name: 'slow', input: {} }] };
        return { text: `main saw ${JSON.stringify(request.toolResults[0]?.output)}` };
      },
      [agent({ name: 'main', tools: ['w'] }), agent({ name: 'w', tools: ['slow'], timeout: 0.2 })],
    );
    const { envelope, tree } = await runtime.run({ agent: 'main', task: 'go' });
    expect(child(tree).status).toBe('timeout');
    expect(envelope.status).toBe('ok');
    expect(envelope.summary).toContain('"status":"timeout"');
  });

  it('makes no model call once the run budget or the tree budget is spent', async () => {
    const { runtime, model } = setup(
      () => ({
        toolCalls: [{ name: 'echo', input: { text: 'x' } }],
        usage: { inputTokens: 60, outputTokens: 10 },
      }),
      [agent({ name: 'main', tools: ['echo'], budget: 100 })],
    );
    const { envelope } = await runtime.run({ agent: 'main', task: 'spend' });
    expect(envelope.status).toBe('budget');
    expect(model.calls).toHaveLength(2);
    expect(envelope.usage.totalTokens).toBe(140);

    const tree = setup(
      (request, who) => {
        if (who === 'main' && request.toolResults.length === 0) {
          return {
            toolCalls: [{ name: 'w', input: { task: 'one' } }],
            usage: { inputTokens: 50, outputTokens: 0 },
          };
        }
        if (who === 'main')
          return {
            toolCalls: [{ name: 'w', input: { task: 'two' } }],
            usage: { inputTokens: 50, outputTokens: 0 },
          };
        return { text: 'w done', usage: { inputTokens: 80, outputTokens: 0 } };
      },
      [agent({ name: 'main', tools: ['w'] }), agent({ name: 'w' })],
      { treeBudget: 150 },
    );
    const outcome = await tree.runtime.run({ agent: 'main', task: 'spend the tree' });
    expect(outcome.envelope.status).toBe('budget');
    // main (50) + w (80) + main (50) = 180 ≥ 150: the second delegation's model call never happens.
    expect(tree.model.calls.map(whoIs)).toEqual(['main', 'w', 'main']);
    expect(outcome.tree.children.map((run) => run.status)).toEqual(['ok', 'budget']);
    expect(outcome.envelope.subtreeUsage.totalTokens).toBe(180);
  });

  it('cancels the whole tree when the root signal aborts', async () => {
    const controller = new AbortController();
    const { runtime, events } = setup(
      (request, who) => {
        if (who === 'main' && request.toolResults.length === 0) {
          return {
            toolCalls: [
              { name: 'w', input: { task: 'a' } },
              { name: 'w', input: { task: 'b' } },
            ],
          };
        }
        setTimeout(() => controller.abort(new Error('stop')), 20);
        return { toolCalls: [{ name: 'slow', input: {} }] };
      },
      [agent({ name: 'main', tools: ['w'] }), agent({ name: 'w', tools: ['slow'] })],
    );
    const { envelope, tree } = await runtime.run({ agent: 'main', task: 'go', signal: controller.signal });
    expect(envelope.status).toBe('cancelled');
    expect(tree.children.map((run) => run.status)).toEqual(['cancelled', 'cancelled']);
    const finishes = events.filter((event) => event.type === 'run-finish');
    expect(finishes.at(-1)!.runId).toBe(tree.id);
  });
});

describe('usage after a stop', () => {
  it('counts every step that finished, the delegating step of the root included', async () => {
    const controller = new AbortController();
    const { runtime, events } = setup(
      (_request, who) => {
        if (who === 'main') return { toolCalls: [{ name: 'w', input: { task: 'a' } }] };
        setTimeout(() => controller.abort(new Error('stop')), 20);
        return { toolCalls: [{ name: 'slow', input: {} }] };
      },
      [agent({ name: 'main', tools: ['w'] }), agent({ name: 'w', tools: ['slow'] })],
    );
    const { envelope, tree } = await runtime.run({ agent: 'main', task: 'go', signal: controller.signal });
    expect(envelope.status).toBe('cancelled');
    // main asked the model once (the step that delegated) and w once: both count, in the tree and in the
    // events every reader folds (the store, the CLI, the page).
    for (const root of [tree, buildRunTree(events)!]) {
      expect(root.turns).toBe(1);
      expect(root.usage.totalTokens).toBeGreaterThan(0);
      expect(child(root).turns).toBe(1);
      expect(root.subtreeUsage.totalTokens).toBe(root.usage.totalTokens + child(root).usage.totalTokens);
    }
  });
});
