import { describe, expect, it } from 'vitest';
import { agent, setup } from '../../test/helpers/runtime-setup.ts';
import type { ScriptedRequest } from '../models/scripted-model.ts';
import type { CadreEvent } from './events.ts';
import type { ConversationKeeper, KeptConversation } from './kept-conversations.ts';

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

/**
 * A keeper of conversations as the store is one (kept-conversations.ts), in memory: each run's agent, tree
 * and session from its events, each user's conversations apart.
 */
function memoryKeeper(): ConversationKeeper & { record: (event: CadreEvent) => void } {
  const runs = new Map<string, KeptConversation & { userId: string }>();
  const kept = new Map<string, { userId: string; conversation: string | null; chars: number }>();
  return {
    record(event) {
      if (event.type === 'run-start') {
        const root = runs.get(event.rootRunId);
        runs.set(event.runId, {
          runId: event.runId,
          agent: event.agent,
          rootRunId: event.rootRunId,
          parentId: event.parentRunId,
          sessionId: event.sessionId ?? root?.sessionId ?? null,
          status: 'running',
          userId: event.userId ?? root?.userId ?? 'local',
        });
      }
      const run = runs.get(event.runId);
      if (event.type === 'run-finish' && run) run.status = event.status;
    },
    async keepConversation(userId, runId, conversation) {
      kept.set(runId, { userId, ...conversation });
    },
    async keptConversation(userId, runId) {
      const run = runs.get(runId);
      if (!run || run.userId !== userId) return undefined;
      const { userId: _owner, ...found } = run;
      const conversation = kept.get(runId);
      if (!conversation || conversation.userId !== userId) return found;
      return {
        ...found,
        chars: conversation.chars,
        ...(conversation.conversation ? { messages: JSON.parse(conversation.conversation) } : {}),
      };
    },
  };
}

describe('continue_agent across turns', () => {
  const definitions = [agent({ name: 'main', tools: ['worker'] }), agent({ name: 'worker' })];
  /** Main delegates on its first turn; on a later one it continues the run id its question names. */
  const script = (request: ScriptedRequest, who: string) => {
    if (who !== 'main')
      return {
        text: texts(request).includes('Which hunt by day?')
          ? `day: ${texts(request).includes('Barn owl, hawk-owl.') ? 'hawk-owl' : 'no idea'}`
          : 'Barn owl, hawk-owl.',
      };
    const asked = texts(request).match(/continue (\w+)/)?.[1];
    const tools = request.prompt.filter((m) => m.role === 'tool').length;
    if (tools === 0)
      return asked
        ? { toolCalls: [{ name: 'continue_agent', input: { run_id: asked, message: 'Which hunt by day?' } }] }
        : { toolCalls: [{ name: 'worker', input: { task: 'Find owls.' } }] };
    return { text: JSON.stringify(request.toolResults[0]?.output) };
  };

  it('goes on with a sub-agent run of an earlier turn of the same session, from its kept conversation', async () => {
    const keeper = memoryKeeper();
    const { runtime } = setup(script, definitions);
    runtime.bus.subscribe((event) => keeper.record(event));
    const record = { conversations: keeper };
    const first = await runtime.run({
      agent: 'main',
      task: 'Owls?',
      sessionId: 's1',
      userId: 'alice',
      record,
    });
    const earlier = first.tree.children[0]!;
    expect(earlier.status).toBe('ok');
    // A later turn: a new tree (nothing of the first in memory), the same session.
    const later = await runtime.run({
      agent: 'main',
      task: `continue ${earlier.id}`,
      sessionId: 's1',
      userId: 'alice',
      record,
    });
    expect(later.envelope.summary).toContain('day: hawk-owl');
    expect(later.tree.children[0]).toMatchObject({ agent: 'worker', status: 'ok', continues: earlier.id });
    // The follow-up's own conversation is kept too: it can be continued in its turn.
    expect((await keeper.keptConversation('alice', later.tree.children[0]!.id))?.messages).toBeDefined();
  });

  it("never reaches another session's or another user's run: it reads as a run that does not exist", async () => {
    const keeper = memoryKeeper();
    const { runtime } = setup(script, definitions);
    runtime.bus.subscribe((event) => keeper.record(event));
    const record = { conversations: keeper };
    const first = await runtime.run({
      agent: 'main',
      task: 'Owls?',
      sessionId: 's1',
      userId: 'alice',
      record,
    });
    const earlier = first.tree.children[0]!.id;
    for (const [sessionId, userId] of [
      ['s2', 'alice'],
      ['s1', 'bob'],
    ] as const) {
      const other = await runtime.run({
        agent: 'main',
        task: `continue ${earlier}`,
        sessionId,
        userId,
        record,
      });
      expect(other.envelope.summary).toContain(`there is no finished sub-agent run \\"${earlier}\\"`);
      expect(other.tree.children).toHaveLength(0);
    }
  });

  it('says a conversation larger than limits.maxStoredOutputChars was not kept, and does not continue it', async () => {
    const keeper = memoryKeeper();
    const { runtime } = setup(script, definitions, { maxStoredOutputChars: 50 });
    runtime.bus.subscribe((event) => keeper.record(event));
    const record = { conversations: keeper };
    const first = await runtime.run({
      agent: 'main',
      task: 'Owls?',
      sessionId: 's1',
      userId: 'alice',
      record,
    });
    const earlier = first.tree.children[0]!.id;
    const later = await runtime.run({
      agent: 'main',
      task: `continue ${earlier}`,
      sessionId: 's1',
      userId: 'alice',
      record,
    });
    expect(later.envelope.summary).toMatch(
      /conversation was \d+ characters, more than limits.maxStoredOutputChars/,
    );
    expect(later.tree.children).toHaveLength(0);
  });
});
