import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agent, child, echo, executed, secret, setup } from '../../test/helpers/runtime-setup.ts';
import { ScriptedModel } from '../models/scripted-model.ts';
import { Runtime } from './runtime.ts';
import { defineTool } from './tool.ts';
import { ToolRegistry } from './tool-registry.ts';

describe("a run's tools, answer, usage and events", () => {
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
