import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ScriptedModel } from '../models/scripted-model.ts';
import { agentDefinitionSchema } from './agent-definition.ts';
import type { ApprovalRequest } from './approvals.ts';
import type { JournalKind, TreeJournal } from './journal.ts';
import { Runtime } from './runtime.ts';
import { defineTool } from './tool.ts';
import { ToolRegistry } from './tool-registry.ts';

/** An in-memory journal shared by the attempts of one tree. */
class MemoryJournal implements TreeJournal {
  entries: Array<{ runKey: string; kind: JournalKind; key: string; body: unknown }> = [];
  get(runKey: string, kind: JournalKind, key: string) {
    return this.entries.find((entry) => entry.runKey === runKey && entry.kind === kind && entry.key === key)
      ?.body;
  }
  put(runKey: string, kind: JournalKind, key: string, body: unknown) {
    this.entries.push({ runKey, kind, key, body: JSON.parse(JSON.stringify(body)) });
  }
  keys(kind: JournalKind) {
    return this.entries.filter((entry) => entry.kind === kind).map((entry) => entry.key);
  }
}

/**
 * A tool that records its start, like bash, and whose first run never ends on its own (the process
 * running it "dies": the test stops the tree while it runs).
 */
function setup(
  rules: { allow: string[]; ask: string[]; deny: string[] },
  options: { through?: 'code' } = {},
) {
  const runs: number[] = [];
  const leftovers: unknown[] = [];
  let running: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    running = resolve;
  });
  const job = defineTool({
    name: 'job',
    family: 'test',
    description: 'does a job',
    input: z.object({}),
    needsApproval: true,
    async execute(_input, context) {
      const run = runs.length + 1;
      await context.recordStart?.({ run });
      runs.push(run);
      if (run === 1) {
        running();
        await new Promise((_resolve, reject) =>
          context.signal.addEventListener('abort', () => reject(context.signal.reason), { once: true }),
        );
      }
      return { done: run };
    },
    async interruptedStart(record) {
      leftovers.push(record);
      return 'Its leftovers were stopped.';
    },
  });
  // Code mode: a tool that makes its calls through the context, as run_js does for the code it runs.
  const code = defineTool({
    name: 'code',
    family: 'test',
    description: 'runs code that calls job',
    input: z.object({}),
    async execute(_input, context) {
      return { fromCode: await context.callTool('job', {}) };
    },
  });
  const model = new ScriptedModel((request) =>
    request.toolResults.length
      ? { text: `finished: ${JSON.stringify(request.toolResults[0]?.output)}` }
      : { toolCalls: [{ name: options.through ?? 'job', input: {} }] },
  );
  const agents = new Map([
    ['main', agentDefinitionSchema.parse({ name: 'main', description: 'main', tools: ['job', 'code'] })],
  ]);
  const asked: ApprovalRequest[] = [];
  const runtime = new Runtime({
    agents,
    tools: new ToolRegistry([job, code]),
    resolveModel: () => model,
    mainModel: 'scripted:x',
    approvals: {
      rules,
      timeoutMs: 60_000,
      approver: {
        decide: async (request) => {
          asked.push(request);
          return { approved: true, by: 'person' };
        },
      },
    },
  });
  return { runtime, runs, leftovers, asked, started };
}

describe('a call an interrupted attempt started', () => {
  it('is dealt with by its tool, then asked again with a warning, even where a rule allows it', async () => {
    const { runtime, runs, leftovers, asked, started } = setup({ allow: ['job'], ask: [], deny: [] });
    const journal = new MemoryJournal();
    const stop = new AbortController();
    const first = runtime.run({ agent: 'main', task: 'go', record: { journal }, signal: stop.signal });
    await started;
    // Allowed by a rule: the first run was not asked about.
    expect(asked).toEqual([]);
    stop.abort(new Error('the process died'));
    expect((await first).envelope.status).toBe('cancelled');
    expect(journal.keys('tool-start')).toHaveLength(1);
    expect(journal.keys('tool-result')).toEqual([]);

    const resumed = await runtime.run({ agent: 'main', task: 'go', record: { journal } });
    expect(resumed.envelope.summary).toBe('finished: {"done":2}');
    expect(leftovers).toEqual([{ run: 1 }]);
    expect(runs).toEqual([1, 2]);
    expect(asked).toHaveLength(1);
    expect(asked[0]?.warning).toBe(
      'This call was started before the run was interrupted (the process running it stopped), so it may ' +
        'have run already, in part or whole; running it again may do its work twice. Its leftovers were stopped.',
    );
    const [firstStart] = journal.keys('tool-start');
    // The second run is recorded beside the first, and asked under its own key.
    expect(journal.keys('tool-start')).toEqual([firstStart, `${firstStart}#2`]);
    expect(journal.keys('approval')).toEqual([`${firstStart}#2`]);
    const request = resumed.tree.toolCalls[0];
    expect(request).toMatchObject({ name: 'job', ok: true });

    // A third attempt finds the result: nothing runs or is asked again.
    await runtime.run({ agent: 'main', task: 'go', record: { journal } });
    expect(runs).toEqual([1, 2]);
    expect(asked).toHaveLength(1);
  });

  it('is found when code made it (run_js): the code runs again and makes its calls under the same ids', async () => {
    const { runtime, runs, leftovers, asked, started } = setup(
      { allow: ['job', 'code'], ask: [], deny: [] },
      { through: 'code' },
    );
    const journal = new MemoryJournal();
    const stop = new AbortController();
    const first = runtime.run({ agent: 'main', task: 'go', record: { journal }, signal: stop.signal });
    await started;
    stop.abort(new Error('the process died'));
    await first;
    const [firstStart] = journal.keys('tool-start');
    expect(firstStart).toMatch(/\/1$/);

    const resumed = await runtime.run({ agent: 'main', task: 'go', record: { journal } });
    expect(resumed.envelope.summary).toBe('finished: {"fromCode":{"done":2}}');
    expect(leftovers).toEqual([{ run: 1 }]);
    expect(runs).toEqual([1, 2]);
    expect(asked.map((request) => request.toolCallId)).toEqual([firstStart]);
    expect(asked[0]?.warning).toMatch(/may have run already.* Its leftovers were stopped\.$/);
    expect(journal.keys('tool-start')).toEqual([firstStart, `${firstStart}#2`]);
  });

  it('stays refused where a rule denies it', async () => {
    const { runtime, asked, started, runs } = setup({ allow: [], ask: [], deny: [] });
    const journal = new MemoryJournal();
    const stop = new AbortController();
    const first = runtime.run({ agent: 'main', task: 'go', record: { journal }, signal: stop.signal });
    await started;
    stop.abort(new Error('the process died'));
    await first;
    expect(asked).toHaveLength(1);
    const denying = setup({ allow: [], ask: [], deny: ['job'] });
    const resumed = await denying.runtime.run({ agent: 'main', task: 'go', record: { journal } });
    expect(resumed.tree.toolCalls[0]).toMatchObject({ ok: false });
    expect(denying.asked).toEqual([]);
    expect(denying.runs).toEqual([]);
    expect(runs).toEqual([1]);
  });
});
