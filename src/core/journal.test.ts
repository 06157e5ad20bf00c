import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ScriptedModel, type ScriptedRequest } from '../models/scripted-model.ts';
import { agentDefinitionSchema } from './agent-definition.ts';
import type { JournalKind, TreeJournal } from './journal.ts';
import { Runtime } from './runtime.ts';
import { defineTool } from './tool.ts';
import { ToolRegistry } from './tool-registry.ts';

/** An in-memory journal that keeps entries in commit order, so a test can cut it anywhere. */
class MemoryJournal implements TreeJournal {
  entries: Array<{ runKey: string; kind: JournalKind; key: string; body: unknown }> = [];
  get(runKey: string, kind: JournalKind, key: string) {
    return this.entries.find((entry) => entry.runKey === runKey && entry.kind === kind && entry.key === key)
      ?.body;
  }
  put(runKey: string, kind: JournalKind, key: string, body: unknown) {
    this.entries.push({ runKey, kind, key, body: JSON.parse(JSON.stringify(body)) });
  }
  cut(count: number): MemoryJournal {
    const copy = new MemoryJournal();
    copy.entries = this.entries.slice(0, count);
    return copy;
  }
}

function setup() {
  const executed: string[] = [];
  const add = defineTool({
    name: 'add',
    family: 'test',
    description: 'adds',
    input: z.object({ a: z.number(), b: z.number() }),
    async execute({ a, b }) {
      executed.push(`${a}+${b}`);
      return { sum: a + b };
    },
  });
  const model = new ScriptedModel((request: ScriptedRequest) => {
    const who = request.system.includes('MAIN') ? 'main' : 'worker';
    const results = request.toolResults;
    if (who === 'main') {
      if (!results.length) {
        return {
          toolCalls: [
            { name: 'worker', input: { task: 'add 1 and 2' } },
            { name: 'worker', input: { task: 'add 3 and 4' } },
          ],
        };
      }
      // A result's run_id names the attempt's own run: the answer is compared without it.
      const views = results.map(({ output }) => JSON.stringify({ ...(output as object), run_id: undefined }));
      return { text: `main: ${views.join(' | ')}` };
    }
    if (!results.length) {
      const [a, b] = request.lastUserText.match(/\d+/g)!.map(Number);
      return { toolCalls: [{ name: 'add', input: { a, b } }] };
    }
    return { text: `sum is ${JSON.stringify(results[0]?.output)}` };
  });
  const agents = new Map(
    [
      { name: 'main', description: 'main', instructions: 'MAIN', tools: ['worker'] },
      { name: 'worker', description: 'worker', instructions: 'WORKER', tools: ['add'] },
    ].map((input) => [input.name, agentDefinitionSchema.parse(input)]),
  );
  let ids = 0;
  const runtime = new Runtime({
    agents,
    tools: new ToolRegistry([add]),
    resolveModel: () => model,
    mainModel: 'scripted:x',
    newId: () => `run_${++ids}`,
  });
  return { runtime, model, executed };
}

describe('run journal', () => {
  it('a tree resumed from any prefix of its journal gives the same answer, redoing nothing committed', async () => {
    const first = setup();
    const journal = new MemoryJournal();
    const reference = await first.runtime.run({ agent: 'main', task: 'sums', record: { journal } });
    expect(reference.envelope.status).toBe('ok');
    const total = journal.entries.length;
    expect(journal.entries.map((entry) => entry.kind).filter((kind) => kind === 'model-step')).toHaveLength(
      6,
    );
    expect(journal.entries.filter((entry) => entry.kind === 'tool-result')).toHaveLength(4);

    for (let kept = 0; kept <= total; kept++) {
      const again = setup();
      const cut = journal.cut(kept);
      const committedSteps = cut.entries.filter((entry) => entry.kind === 'model-step').length;
      const committedAdds = cut.entries.filter(
        (entry) => entry.kind === 'tool-result' && entry.runKey !== 'r',
      ).length;
      const resumed = await again.runtime.run({ agent: 'main', task: 'sums', record: { journal: cut } });
      expect(resumed.envelope.summary).toBe(reference.envelope.summary);
      // Each model step is asked for exactly once across both attempts; each add runs at most once.
      expect(again.model.calls.length).toBe(6 - committedSteps);
      expect(again.executed.length).toBeLessThanOrEqual(2 - Math.min(2, committedAdds));
      expect(cut.entries.length).toBe(total);
    }
  });
});

describe('approvals across a restart', () => {
  it('a call that was waiting for approval waits again under the same id and deadline', async () => {
    const deploy = defineTool({
      name: 'deploy',
      family: 'test',
      description: 'deploys',
      needsApproval: true,
      input: z.object({}),
      async execute() {
        return { deployed: true };
      },
    });
    const build = () => {
      const model = new ScriptedModel((request: ScriptedRequest) =>
        request.toolResults.length
          ? { text: `done: ${JSON.stringify(request.toolResults[0]?.output)}` }
          : { toolCalls: [{ name: 'deploy', input: {}, id: 'call_deploy' }] },
      );
      const agents = new Map([
        ['ops', agentDefinitionSchema.parse({ name: 'ops', description: 'ops', tools: ['deploy'] })],
      ]);
      return new Runtime({
        agents,
        tools: new ToolRegistry([deploy]),
        resolveModel: () => model,
        mainModel: 'scripted:x',
        approvals: { rules: { allow: [], ask: [], deny: [] }, approver: undefined, timeoutMs: 60_000 },
      });
    };
    const journal = new MemoryJournal();
    const asked: Array<{ approvalId: string; expiresAt: number }> = [];
    const stop = new AbortController();
    // First attempt: the process "dies" while the person has not answered yet.
    await build().run({
      agent: 'ops',
      task: 'deploy',
      record: { journal },
      signal: stop.signal,
      approver: {
        decide: async (request) => {
          asked.push({ approvalId: request.approvalId, expiresAt: request.expiresAt });
          stop.abort();
          return new Promise(() => {});
        },
      },
    });
    expect(journal.entries.some((entry) => entry.kind === 'tool-result')).toBe(false);
    const resumed = await build().run({
      agent: 'ops',
      task: 'deploy',
      record: { journal },
      approver: {
        decide: async (request) => {
          asked.push({ approvalId: request.approvalId, expiresAt: request.expiresAt });
          return { approved: true, by: 'person' };
        },
      },
    });
    expect(resumed.envelope.summary).toBe('done: {"deployed":true}');
    expect(asked).toHaveLength(2);
    expect(asked[1]).toEqual(asked[0]);
  });
});
