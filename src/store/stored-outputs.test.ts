import { expect, it } from 'vitest';
import { z } from 'zod';
import { agentDefinitionSchema } from '../core/agent-definition.ts';
import { EventBus } from '../core/events.ts';
import { Runtime } from '../core/runtime.ts';
import { defineTool } from '../core/tool.ts';
import { ToolRegistry } from '../core/tool-registry.ts';
import { ScriptedModel } from '../models/scripted-model.ts';
import { openSqliteStore } from './sqlite/sqlite-store.ts';

/** An MCP-like tool that answers 3 MB per call. */
const huge = defineTool({
  name: 'huge',
  family: 'test',
  description: 'returns a lot',
  input: z.object({ n: z.number() }),
  execute: async ({ n }) => ({ n, text: `${n}`.repeat(3_000_000) }),
});

it("stores a head and the size of a tool output past maxStoredOutputChars, and pages a tree's events", async () => {
  const store = openSqliteStore(':memory:');
  const bus = new EventBus();
  bus.subscribe((event) => store.runs.record(event));
  const model = new ScriptedModel((request) =>
    request.toolResults.length
      ? { text: 'done' }
      : { toolCalls: [1, 2, 3, 4].map((n) => ({ name: 'huge', input: { n } })) },
  );
  const runtime = new Runtime({
    agents: new Map([
      ['solo', agentDefinitionSchema.parse({ name: 'solo', description: 's', tools: ['huge'] })],
    ]),
    tools: new ToolRegistry([huge]),
    resolveModel: () => model,
    mainModel: 'scripted:x',
    bus,
    limits: { maxStoredOutputChars: 100_000 },
  });
  const { tree } = await runtime.run({ agent: 'solo', task: 'go', userId: 'alice' });
  await store.runs.flush();
  // Four 3 MB outputs were 12 MB in the database (the 16 x 9 MB grew it by 616 MB).
  const { bytes } = store.database.prepare('SELECT sum(length(body)) AS bytes FROM payloads').get() as {
    bytes: number;
  };
  expect(bytes).toBeLessThan(4 * 110_000);
  const events = await store.runs.events('alice', tree.id);
  const results = events.map(({ event }) => event).filter((event) => event.type === 'tool-result');
  expect(results).toHaveLength(4);
  for (const result of results) {
    expect((result as { output: unknown }).output).toMatchObject({ cut: true, chars: 3_000_017 });
    expect(JSON.stringify(result).length).toBeLessThan(110_000);
  }
  // A page holds at most `limit` events, and stops early past `maxChars` (one event at least).
  expect(await store.runs.events('alice', tree.id, { limit: 3 })).toHaveLength(3);
  const first = await store.runs.events('alice', tree.id, { limit: 100, maxChars: 1 });
  expect(first).toHaveLength(1);
  const rest = await store.runs.events('alice', tree.id, { after: first[0]!.cursor, limit: 1000 });
  expect(rest).toHaveLength(events.length - 1);
  // The model still saw the head of the real output, bounded by maxToolOutputChars as before.
  expect(JSON.stringify(model.calls[1]!.prompt)).toContain('1111111111');
  await store.close();
});
