import { describe, expect, it } from 'vitest';
import { agent, setup } from '../../test/helpers/runtime-setup.ts';
import type { ScriptedRequest } from '../models/scripted-model.ts';

const texts = (request: ScriptedRequest) => JSON.stringify(request.prompt.filter((m) => m.role !== 'system'));

/** The main agent follows up a finished sub-agent: it goes on from its own conversation, as a new run. */
describe('continue_agent', () => {
  it('continues a finished sub-agent run from its own conversation, as a new linked run counted in the tree', async () => {
    const offered: string[][] = [];
    const workerPrompts: string[] = [];
    let firstRunId: string | undefined;
    const { runtime, events } = setup(
      (request, who) => {
        if (who === 'main') {
          offered.push(request.toolNames);
          const tools = request.prompt.filter((m) => m.role === 'tool').length;
          if (tools === 0)
            return { toolCalls: [{ name: 'worker', input: { task: 'Find the owl species.' } }] };
          if (tools === 1) {
            // The delegation's result names the run it came from.
            const view = request.toolResults[0]?.output as { run_id?: string };
            firstRunId = view.run_id;
            return {
              toolCalls: [
                {
                  name: 'continue_agent',
                  input: { run_id: view.run_id, message: 'Which of them hunt by day?' },
                },
              ],
            };
          }
          return { text: `main: ${JSON.stringify(request.toolResults[0]?.output)}` };
        }
        workerPrompts.push(texts(request));
        return {
          text: texts(request).includes('Which of them hunt by day?')
            ? 'The northern hawk-owl.'
            : 'Barn owl, tawny owl, hawk-owl.',
          usage: { inputTokens: 10, outputTokens: 5 },
        };
      },
      [agent({ name: 'main', tools: ['worker'] }), agent({ name: 'worker' })],
    );
    const { envelope, tree } = await runtime.run({ agent: 'main', task: 'Owls?' });
    expect(envelope.status).toBe('ok');
    expect(envelope.summary).toContain('The northern hawk-owl.');
    // Offered from the first step on (a stable tool list keeps the provider's prompt cache).
    expect(offered[0]).toContain('continue_agent');
    expect(offered[1]).toEqual(offered[0]);
    // The follow-up run went on from the first run's conversation: its task, its answer, then the question.
    expect(workerPrompts[1]).toContain('Find the owl species.');
    expect(workerPrompts[1]).toContain('Barn owl, tawny owl, hawk-owl.');
    expect(workerPrompts[1]).toContain('Which of them hunt by day?');
    expect(tree.children.map((run) => [run.agent, run.status])).toEqual([
      ['worker', 'ok'],
      ['worker', 'ok'],
    ]);
    expect(tree.children[0]?.id).toBe(firstRunId);
    expect(tree.children[1]?.continues).toBe(firstRunId);
    const starts = events.filter((event) => event.type === 'run-start' && event.agent === 'worker');
    expect(starts[1]).toMatchObject({ continues: firstRunId });
    // Its usage counts in the tree (both worker runs' 15 tokens each under main).
    expect(tree.subtreeUsage.totalTokens - tree.usage.totalTokens).toBe(30);
    // The conversation is kept by the parent, not in the stored tool result.
    const stored = events.filter((event) => event.type === 'tool-result');
    expect(JSON.stringify(stored)).not.toContain('"conversation"');
  });

  it('refuses a run id that is not a finished sub-agent run of this run', async () => {
    const { runtime } = setup(
      (request, who) => {
        if (who !== 'main') return { text: 'done' };
        const tools = request.prompt.filter((m) => m.role === 'tool').length;
        if (tools === 0) return { toolCalls: [{ name: 'worker', input: { task: 't' } }] };
        if (tools === 1)
          return {
            toolCalls: [{ name: 'continue_agent', input: { run_id: 'run_elsewhere', message: 'more' } }],
          };
        return { text: JSON.stringify(request.toolResults[0]?.output) };
      },
      [agent({ name: 'main', tools: ['worker'] }), agent({ name: 'worker' })],
    );
    const { envelope, tree } = await runtime.run({ agent: 'main', task: 'go' });
    expect(envelope.summary).toContain('no finished sub-agent run');
    expect(tree.children).toHaveLength(1);
  });
});
