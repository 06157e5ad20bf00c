import { describe, expect, it } from 'vitest';
import { agent, echo } from '../../test/helpers/runtime-setup.ts';
import { ScriptedModel } from '../models/scripted-model.ts';
import type { CadreEvent } from './events.ts';
import type { TreeJournal } from './journal.ts';
import { Runtime } from './runtime.ts';
import { ToolRegistry } from './tool-registry.ts';

const usage = { inputTokens: 10, outputTokens: 5 };

/** A runtime whose main agent calls echo twice, then answers; `log` gets each barrier and each request. */
function setup(log: string[], events: CadreEvent[]) {
  const model = new ScriptedModel((request) => {
    const done = request.prompt.filter((message) => message.role === 'tool').length;
    log.push(`request ${done}`);
    return done < 2
      ? { toolCalls: [{ name: 'echo', input: { text: `call ${done}` } }], usage }
      : { text: 'done', usage };
  });
  const runtime = new Runtime({
    agents: new Map([['main', agent({ name: 'main', tools: ['echo'] })]]),
    tools: new ToolRegistry([echo]),
    resolveModel: () => model,
    mainModel: 'scripted:test',
    beforeModelRequest: async () => {
      // What the barrier sees: every tool result published so far.
      log.push(`barrier ${events.filter((event) => event.type === 'tool-result').length}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    },
  });
  runtime.bus.subscribe((event) => events.push(event));
  return runtime;
}

describe('the barrier before each model request', () => {
  it('is awaited before every request, after the tool results the request carries were published', async () => {
    const log: string[] = [];
    const events: CadreEvent[] = [];
    const outcome = await setup(log, events).run({ agent: 'main', task: 'go' });
    expect(outcome.envelope.status).toBe('ok');
    expect(log).toEqual(['barrier 0', 'request 0', 'barrier 1', 'request 1', 'barrier 2', 'request 2']);
  });

  it('is not awaited for a step replayed from the journal (no request is sent)', async () => {
    const entries = new Map<string, unknown>();
    const journal: TreeJournal = {
      get: (runKey, kind, key) => entries.get(`${runKey} ${kind} ${key}`),
      put: (runKey, kind, key, body) => {
        entries.set(`${runKey} ${kind} ${key}`, JSON.parse(JSON.stringify(body)));
      },
    };
    await setup([], []).run({ agent: 'main', task: 'go', record: { journal } });
    const log: string[] = [];
    await setup(log, []).run({ agent: 'main', task: 'go', record: { journal } });
    expect(log).toEqual([]);
  });
});
