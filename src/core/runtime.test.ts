import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ScriptedModel, type ScriptedReply, type ScriptedRequest } from '../models/scripted-model.ts';
import { type AgentDefinitionInput, agentDefinitionSchema } from './agent-definition.ts';
import type { CadreEvent } from './events.ts';
import { FINAL_ANSWER_PROMPT, type RuntimeLimits } from './limits.ts';
import type { RunTree } from './run-tree.ts';
import { Runtime } from './runtime.ts';
import { defineTool } from './tool.ts';
import { ToolRegistry } from './tool-registry.ts';

const executed: string[] = [];
const echo = defineTool({
  name: 'echo',
  family: 'test',
  description: 'Echo the text',
  input: z.object({ text: z.string() }),
  async execute({ text }) {
    executed.push(text);
    return { text };
  },
});
const secret = defineTool({
  name: 'secret',
  family: 'test',
  description: 'Never offered to the child',
  input: z.object({}),
  async execute() {
    executed.push('secret');
    return 'leaked';
  },
});
const slow = defineTool({
  name: 'slow',
  family: 'test',
  description: 'Waits until aborted',
  input: z.object({}),
  execute: (_input, context) =>
    new Promise((_resolve, reject) =>
      context.signal.addEventListener('abort', () => reject(context.signal.reason)),
    ),
});

function agent(input: Partial<AgentDefinitionInput> & { name: string }) {
  return agentDefinitionSchema.parse({
    description: `the ${input.name} agent`,
    instructions: `I am ${input.name}.`,
    ...input,
  });
}

const whoIs = (request: ScriptedRequest) => request.system.match(/I am (\w+)\./)?.[1] ?? 'unknown';

function setup(
  script: (request: ScriptedRequest, who: string) => ScriptedReply | Promise<ScriptedReply>,
  definitions: ReturnType<typeof agent>[],
  limits: Partial<RuntimeLimits> = {},
) {
  const model = new ScriptedModel((request) => script(request, whoIs(request)));
  const events: CadreEvent[] = [];
  const runtime = new Runtime({
    agents: new Map(definitions.map((definition) => [definition.name, definition])),
    tools: new ToolRegistry([echo, secret, slow]),
    resolveModel: () => model,
    mainModel: 'scripted:test',
    limits,
  });
  runtime.bus.subscribe((event) => events.push(event));
  return { model, runtime, events };
}

const child = (tree: RunTree, index = 0) => tree.children[index]!;

describe('delegation', () => {
  it('gives a child only its task by default (isolated), and last-N or full when asked', async () => {
    const seen: Record<string, string[]> = {};
    const { runtime } = setup(
      (request, who) => {
        seen[who] = request.prompt.filter((m) => m.role !== 'system').map((m) => JSON.stringify(m.content));
        if (who === 'main' && request.toolResults.length === 0) {
          return {
            toolCalls: [
              { name: 'iso', input: { task: 'task for iso' } },
              { name: 'last', input: { task: 'task for last' } },
              { name: 'all', input: { task: 'task for all' } },
            ],
          };
        }
        return { text: `${who} done` };
      },
      [
        agent({ name: 'main', tools: ['iso', 'last', 'all'] }),
        agent({ name: 'iso' }),
        agent({ name: 'last', context: 'last-1' }),
        agent({ name: 'all', context: 'full' }),
      ],
    );
    await runtime.run({
      agent: 'main',
      task: 'current question',
      history: [
        { role: 'user', content: 'OLDEST secret' },
        { role: 'assistant', content: 'older answer' },
      ],
    });
    expect(seen.iso).toEqual(['[{"type":"text","text":"task for iso"}]']);
    expect(seen.last).toHaveLength(2);
    expect(seen.last!.join()).toContain('current question');
    expect(seen.last!.join()).not.toContain('OLDEST');
    expect(seen.all!.join()).toContain('OLDEST secret');
    expect(seen.all!.join()).toContain('older answer');
  });

  it('answers calls to tools outside the allow-list with an error and never runs them', async () => {
    executed.length = 0;
    const { runtime, model } = setup(
      (request, who) => {
        if (who === 'worker' && request.toolResults.length === 0) {
          return {
            toolCalls: [
              { name: 'secret', input: {} },
              { name: '__proto__', input: {} },
              { name: 'Echo', input: { text: 'x' } },
              { name: 'echo', input: { text: 'allowed' } },
            ],
          };
        }
        if (who === 'main' && request.toolResults.length === 0)
          return { toolCalls: [{ name: 'worker', input: { task: 't' } }] };
        return { text: 'done' };
      },
      [agent({ name: 'main', tools: ['worker', 'secret'] }), agent({ name: 'worker', tools: ['echo'] })],
    );
    const { tree } = await runtime.run({ agent: 'main', task: 'go' });
    expect(executed).toEqual(['allowed']);
    expect(child(tree).toolCalls.map((call) => [call.name, call.ok, Boolean(call.refused)])).toEqual([
      ['secret', false, true],
      ['__proto__', false, true],
      ['Echo', false, true],
      ['echo', true, false],
    ]);
    const workerFollowUp = model.calls.filter((call) => whoIs(call) === 'worker')[1]!;
    expect(workerFollowUp.toolResults.map((result) => result.toolName)).toEqual([
      'secret',
      '__proto__',
      'Echo',
      'echo',
    ]);
    expect(JSON.stringify(workerFollowUp.toolResults[0]!.output)).toMatch(/unavailable tool/);
  });

  it('gives sub-agents no agent tools at the default maxDepth of 1', async () => {
    const offered: Record<string, string[]> = {};
    const { runtime } = setup(
      (request, who) => {
        offered[who] = request.toolNames;
        if (who === 'main' && request.toolResults.length === 0)
          return { toolCalls: [{ name: 'a', input: { task: 't' } }] };
        return { text: 'ok' };
      },
      [
        agent({ name: 'main', tools: ['a'] }),
        agent({ name: 'a', tools: ['b', 'echo'] }),
        agent({ name: 'b' }),
      ],
    );
    await runtime.run({ agent: 'main', task: 'go' });
    expect(offered.a).toEqual(['echo']);

    // A sub-agent cannot raise the depth its tree allows.
    const greedy = setup(
      (request, who) => {
        offered[who] = request.toolNames;
        if (who === 'main' && request.toolResults.length === 0)
          return { toolCalls: [{ name: 'a', input: { task: 't' } }] };
        return { text: 'ok' };
      },
      [
        agent({ name: 'main', tools: ['a'] }),
        agent({ name: 'a', tools: ['b', 'echo'], maxDepth: 5 }),
        agent({ name: 'b' }),
      ],
    );
    await greedy.runtime.run({ agent: 'main', task: 'go' });
    expect(offered.a).toEqual(['echo']);

    const deeper = setup(
      (request, who) => {
        offered[who] = request.toolNames;
        if (who !== 'b' && request.toolResults.length === 0) {
          return { toolCalls: [{ name: who === 'main' ? 'a' : 'b', input: { task: 't' } }] };
        }
        return { text: 'ok' };
      },
      [
        agent({ name: 'main', tools: ['a'] }),
        agent({ name: 'a', tools: ['b', 'echo'] }),
        agent({ name: 'b' }),
      ],
      { maxDepth: 2 },
    );
    const { tree } = await deeper.runtime.run({ agent: 'main', task: 'go' });
    expect(offered.a).toEqual(['b', 'echo']);
    expect(child(child(tree)).agent).toBe('b');
  });

  it('ends a run out of turns with one final call without tools, status max_turns', async () => {
    const { runtime, model } = setup(
      (request) => {
        if (request.lastUserText === FINAL_ANSWER_PROMPT) return { text: 'best effort answer' };
        return { toolCalls: [{ name: 'echo', input: { text: String(request.index) } }] };
      },
      [agent({ name: 'main', tools: ['echo'], maxTurns: 3 })],
    );
    const { envelope, tree } = await runtime.run({ agent: 'main', task: 'loop' });
    expect(envelope.status).toBe('max_turns');
    expect(envelope.summary).toBe('best effort answer');
    expect(tree.toolCalls).toHaveLength(3);
    expect(model.calls).toHaveLength(4);
    expect(model.calls[3]!.toolNames).toEqual([]);
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

  it('runs siblings in parallel, bounded by maxConcurrency, and refuses delegations past maxFanOut', async () => {
    let running = 0;
    let peak = 0;
    const { runtime } = setup(
      async (request, who) => {
        if (who === 'main' && request.toolResults.length === 0) {
          return { toolCalls: [1, 2, 3, 4, 5, 6].map((n) => ({ name: 'w', input: { task: `part ${n}` } })) };
        }
        if (who === 'w') {
          running++;
          peak = Math.max(peak, running);
          await new Promise((resolve) => setTimeout(resolve, 60));
          running--;
          return { text: 'part done' };
        }
        return { text: 'all done' };
      },
      [agent({ name: 'main', tools: ['w'] }), agent({ name: 'w' })],
      { maxConcurrency: 3, maxFanOut: 5 },
    );
    const { tree } = await runtime.run({ agent: 'main', task: 'fan out' });
    expect(peak).toBe(3);
    expect(tree.children).toHaveLength(5);
    const refused = tree.toolCalls.filter((call) => call.refused);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.refused).toMatch(/at most 5 delegations per step/);
  });

  it('gives the same agent asked the same task twice by one parent the first result', async () => {
    const { runtime, model } = setup(
      (request, who) => {
        if (who === 'main' && request.index === 0)
          return { toolCalls: [{ name: 'w', input: { task: 'same  task' } }] };
        if (
          who === 'main' &&
          request.toolResults.length &&
          model.calls.filter((c) => whoIs(c) === 'main').length === 2
        ) {
          return { toolCalls: [{ name: 'w', input: { task: 'same task ' } }] };
        }
        if (who === 'w') return { text: 'w result' };
        return { text: 'done' };
      },
      [agent({ name: 'main', tools: ['w'] }), agent({ name: 'w' })],
    );
    const { tree } = await runtime.run({ agent: 'main', task: 'ask twice' });
    expect(model.calls.filter((call) => whoIs(call) === 'w')).toHaveLength(1);
    expect(tree.children).toHaveLength(1);
    expect(tree.toolCalls.map((call) => Boolean(call.deduplicated))).toEqual([false, true]);
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

  it('returns malformed tool arguments to the model as an error it can correct', async () => {
    executed.length = 0;
    const { runtime, model } = setup(
      (request) => {
        if (request.index === 0) return { toolCalls: [{ name: 'echo', rawInput: '{"text": ' }] };
        if (request.index === 1) return { toolCalls: [{ name: 'echo', input: { text: 42 } }] };
        if (request.index === 2) return { toolCalls: [{ name: 'echo', input: { text: 'fixed' } }] };
        return { text: 'ok' };
      },
      [agent({ name: 'main', tools: ['echo'] })],
    );
    const { envelope } = await runtime.run({ agent: 'main', task: 'go' });
    expect(envelope.status).toBe('ok');
    expect(executed).toEqual(['fixed']);
    expect(JSON.stringify(model.calls[1]!.toolResults)).toMatch(/JSON/);
    expect(JSON.stringify(model.calls[2]!.toolResults)).toMatch(/text/);
  });

  it('records each run its own usage and its subtree usage, and events in order per run', async () => {
    const { runtime, events } = setup(
      (request, who) => {
        if (who === 'main' && request.toolResults.length === 0) {
          return {
            toolCalls: [{ name: 'w', input: { task: 't' } }],
            usage: { inputTokens: 10, outputTokens: 5 },
          };
        }
        return { text: 'x', usage: { inputTokens: 7, outputTokens: 3 } };
      },
      [agent({ name: 'main', tools: ['w'] }), agent({ name: 'w' })],
    );
    const { envelope, tree } = await runtime.run({ agent: 'main', task: 'go' });
    expect(child(tree).usage).toEqual({ inputTokens: 7, outputTokens: 3, totalTokens: 10 });
    expect(tree.usage).toEqual({ inputTokens: 17, outputTokens: 8, totalTokens: 25 });
    expect(envelope.subtreeUsage).toEqual({ inputTokens: 24, outputTokens: 11, totalTokens: 35 });
    for (const runId of new Set(events.map((event) => event.runId))) {
      const seqs = events.filter((event) => event.runId === runId).map((event) => event.seq);
      expect(seqs).toEqual(seqs.map((_, index) => index));
    }
  });

  it('never reports success with empty text', async () => {
    const { runtime } = setup(() => ({ text: '' }), [agent({ name: 'main' })]);
    const { envelope } = await runtime.run({ agent: 'main', task: 'say nothing' });
    expect(envelope.status).toBe('error');
    expect(envelope.summary).toMatch(/without an answer/);
  });

  it('validates declared structured output into data', async () => {
    const output = { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] };
    const good = setup(() => ({ text: '```json\n{"n": 3}\n```' }), [agent({ name: 'main', output })]);
    expect((await good.runtime.run({ agent: 'main', task: 'x' })).envelope).toMatchObject({
      status: 'ok',
      data: { n: 3 },
    });
    const bad = setup(() => ({ text: '{"n": "three"}' }), [agent({ name: 'main', output })]);
    expect((await bad.runtime.run({ agent: 'main', task: 'x' })).envelope.status).toBe('partial');
  });

  it('prefetches a sub-agent into "External knowledge", and goes on without it when it fails', async () => {
    const { runtime, model } = setup(
      (_request, who) => (who === 'kb' ? { text: 'Paris is the capital of France.' } : { text: 'answer' }),
      [agent({ name: 'main' }), agent({ name: 'kb' })],
    );
    const { tree } = await runtime.run({
      agent: 'main',
      task: 'capital of France?',
      prefetch: { agent: 'kb' },
    });
    expect(child(tree).agent).toBe('kb');
    const mainCall = model.calls.find((call) => whoIs(call) === 'main')!;
    expect(mainCall.system).toContain('## External knowledge\nParis is the capital of France.');

    const failing = setup(
      (_request, who) => (who === 'kb' ? { error: { status: 400 } } : { text: 'answer anyway' }),
      [agent({ name: 'main' }), agent({ name: 'kb' })],
    );
    const outcome = await failing.runtime.run({ agent: 'main', task: 'q', prefetch: { agent: 'kb' } });
    expect(outcome.envelope).toMatchObject({ status: 'ok', summary: 'answer anyway' });
    expect(child(outcome.tree).status).toBe('error');
    expect(failing.model.calls.find((call) => whoIs(call) === 'main')!.system).not.toContain(
      'External knowledge',
    );
  });

  it("lets code call only the run's own direct tools through the tool context", async () => {
    const probe = defineTool({
      name: 'probe',
      family: 'test',
      description: 'calls other tools',
      input: z.object({}),
      async execute(_input, context) {
        const ok = await context.callTool('echo', { text: 'inner' });
        const refused = await context.callTool('secret', {}).catch((error: Error) => error.message);
        return { ok, refused, allowed: context.allowedTools() };
      },
    });
    const model = new ScriptedModel((request) =>
      request.index === 0
        ? { toolCalls: [{ name: 'probe', input: {} }] }
        : { text: JSON.stringify(request.toolResults[0]?.output) },
    );
    const runtime = new Runtime({
      agents: new Map([['main', agent({ name: 'main', tools: ['probe', 'echo'] })]]),
      tools: new ToolRegistry([probe, echo, secret]),
      resolveModel: () => model,
      mainModel: 'scripted:test',
    });
    const { envelope, tree } = await runtime.run({ agent: 'main', task: 'x' });
    expect(JSON.parse(envelope.summary)).toEqual({
      ok: { text: 'inner' },
      refused: 'no tool named "secret" is available here',
      allowed: ['probe', 'echo'],
    });
    expect(tree.toolCalls.map((call) => call.name)).toEqual(['probe', 'echo']);
  });

  it('makes the first model call use the firstTool when a definition names one', async () => {
    const { runtime, model } = setup(
      (request) =>
        request.index === 0 ? { toolCalls: [{ name: 'echo', input: { text: 'plan' } }] } : { text: 'done' },
      [agent({ name: 'main', tools: ['echo', 'secret'], firstTool: 'echo' })],
    );
    await runtime.run({ agent: 'main', task: 'plan first' });
    expect(model.calls[0]!.toolChoice).toEqual({ type: 'tool', toolName: 'echo' });
    expect(model.calls[1]!.toolChoice).toEqual({ type: 'auto' });
    expect(() => agent({ name: 'x', tools: ['echo'], firstTool: 'secret' })).toThrow(
      /firstTool must be one of/,
    );
  });
});
