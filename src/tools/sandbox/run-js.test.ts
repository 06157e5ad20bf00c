import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentDefinitionSchema } from '../../core/agent-definition.ts';
import type { CadreEvent } from '../../core/events.ts';
import { Runtime } from '../../core/runtime.ts';
import { ToolRegistry } from '../../core/tool-registry.ts';
import { ScriptedModel } from '../../models/scripted-model.ts';
import { calculateTool } from '../compute/calculate.ts';
import { vaultGetTool, vaultSetTool } from '../compute/vault.ts';
import { createRunJsTool } from './run-js.ts';

function setup(code: string[]) {
  const registry = new ToolRegistry();
  const runJs = createRunJsTool({ lookup: (name) => registry.get(name) });
  registry.register(calculateTool).register(vaultSetTool).register(vaultGetTool).register(runJs);
  registry.register({ ...calculateTool, name: 'secret_tool', description: 'not allowed to math' });
  const replies = [
    ...code.map((source) => ({ toolCalls: [{ name: 'run_js', input: { code: source } }] })),
    { text: 'done' },
  ];
  const model = new ScriptedModel(replies);
  const math = agentDefinitionSchema.parse({
    name: 'math',
    description: 'maths',
    tools: ['calculate', 'run_js'],
  });
  const runtime = new Runtime({
    agents: new Map([['math', math]]),
    tools: registry,
    resolveModel: () => model,
    mainModel: 'scripted:x',
  });
  return { runtime, model };
}

describe('run_js in a run (code mode)', () => {
  it('loops over an allowed tool, reaches the run vault, and cannot see other tools', async () => {
    const { runtime, model } = setup([
      `const results = [];
       for (const n of [2, 3, 4]) results.push((await calculate({ expression: n + '^5' })).result);
       await vault_set({ key: 'powers', value: results });
       console.log('computed', results.length);
       return { results, help: help().map((t) => t.name), secret: typeof secret_tool };`,
      'return (await vault_get({ key: "powers" })).value.length',
    ]);
    const events: CadreEvent[] = [];
    const { envelope } = await runtime.run({
      agent: 'math',
      task: 'powers',
      onEvent: (event) => events.push(event),
    });
    expect(envelope.status).toBe('ok');
    const outputs = model.calls.slice(1, 3).map((call) => call.toolResults[0]?.output as any);
    expect(outputs[0].result).toEqual({
      results: ['32', '243', '1024'],
      help: ['calculate', 'vault_get', 'vault_set'],
      secret: 'undefined',
    });
    expect(outputs[0].console).toBe('computed 3\n');
    expect(outputs[1].result).toBe(3);
    const nested = events.filter((event) => event.type === 'tool-call' && event.name === 'calculate');
    expect(nested).toHaveLength(3);
  });

  it('returns a final expression after a top-level await, as its description promises', async () => {
    const { runtime, model } = setup([
      'const r = await calculate({ expression: "2^10" });\nNumber(r.result) + 1',
      'const r = await calculate({ expression: "3 * 3" })\nconst note = "a; b}"\n;({ r: r.result, note })\n',
      'await calculate({ expression: "1" });\nconst unused = 1;',
    ]);
    await runtime.run({ agent: 'math', task: 'x' });
    const outputs = model.calls.slice(1, 4).map((call) => call.toolResults[0]?.output as any);
    expect(outputs.map((output) => output.result)).toEqual([1025, { r: '9', note: 'a; b}' }, null]);
  });

  it('reports a failing tool call inside as a catchable error', async () => {
    const { runtime, model } = setup([
      `try { await calculate({ expression: 'nope(' }); } catch (e) { return 'caught: ' + e.message; }`,
    ]);
    await runtime.run({ agent: 'math', task: 'x' });
    const output = model.calls[1]?.toolResults[0]?.output as any;
    expect(output.result).toMatch(/^caught: could not evaluate/);
  });

  it('reaches calculate only through its bounded worker: a memory bomb from code is a catchable error', async () => {
    const { runtime, model } = setup([
      `const out = [];
       try { await calculate({ expression: 'size(zeros(32000,32000))' }); } catch (e) { out.push(e.message); }
       out.push((await calculate({ expression: '6 * 7' })).result);
       return out;`,
    ]);
    const { envelope } = await runtime.run({ agent: 'math', task: 'x' });
    expect(envelope.status).toBe('ok');
    const output = model.calls[1]?.toolResults[0]?.output as any;
    // Which cap trips first depends on the machine's load (a busy CI host reaches the time limit before
    // the heap cap); either way the bomb is a catchable error and the next expression still works.
    expect(output.result[0]).toMatch(/needs more than the calculator's 256 MB of memory|took longer than/);
    expect(output.result[1]).toBe('42');
  });

  it('ends the tool calls the code started when run_js ends', async () => {
    let aborted: unknown;
    const registry = new ToolRegistry();
    const runJs = createRunJsTool({ lookup: (name) => registry.get(name) });
    registry.register(runJs).register({
      name: 'wait_forever',
      family: 'test',
      description: 'waits until its call is ended',
      input: z.object({}),
      execute: (_input, context) =>
        new Promise((_resolve, reject) =>
          context.signal.addEventListener('abort', () => {
            aborted = context.signal.reason;
            reject(context.signal.reason);
          }),
        ),
    });
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'run_js', input: { code: 'wait_forever({}); return "left early"' } }] },
      { text: 'done' },
    ]);
    const runtime = new Runtime({
      agents: new Map([
        [
          'coder',
          agentDefinitionSchema.parse({ name: 'coder', description: 'c', tools: ['run_js', 'wait_forever'] }),
        ],
      ]),
      tools: registry,
      resolveModel: () => model,
      mainModel: 'scripted:x',
    });
    const { envelope, tree } = await runtime.run({ agent: 'coder', task: 'x' });
    expect(envelope.status).toBe('ok');
    await expect.poll(() => aborted).toBeInstanceOf(Error);
    expect(String((aborted as Error).message)).toMatch(/run_js ended/);
    expect(tree.toolCalls.find((call) => call.name === 'wait_forever')?.ok).toBe(false);
  });
});
