/**
 * Issue 23, item 6: a tool (an MCP server, say) answering 9 MB per call, 16 calls in two steps, on a
 * SQLite file. Prints the database's growth, the process's peak RSS and what reading the tree's events
 * back costs. `node bench/stored-outputs.ts [maxStoredOutputChars]` (default: Cadre's default).
 */
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { storedEventPages } from '../src/app/event-pages.ts';
import { agentDefinitionSchema } from '../src/core/agent-definition.ts';
import { EventBus } from '../src/core/events.ts';
import { Runtime } from '../src/core/runtime.ts';
import { defineTool } from '../src/core/tool.ts';
import { ToolRegistry } from '../src/core/tool-registry.ts';
import { ScriptedModel } from '../src/models/scripted-model.ts';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.ts';

const limit = process.argv[2] ? Number(process.argv[2]) : undefined;
const file = path.join(mkdtempSync(path.join(tmpdir(), 'cadre-bench-outputs-')), 'cadre.db');
const store = openSqliteStore(file);
const bus = new EventBus();
bus.subscribe((event) => store.runs.record(event));
const huge = defineTool({
  name: 'huge',
  family: 'test',
  description: 'returns 9 MB',
  input: z.object({ n: z.number() }),
  execute: async ({ n }) => ({ n, text: String(n % 10).repeat(9 * 1024 * 1024) }),
});
const model = new ScriptedModel((request) =>
  request.index < 2
    ? {
        toolCalls: Array.from({ length: 8 }, (_, n) => ({
          name: 'huge',
          input: { n: request.index * 8 + n },
        })),
      }
    : { text: 'done' },
);
const runtime = new Runtime({
  agents: new Map([
    ['solo', agentDefinitionSchema.parse({ name: 'solo', description: 's', tools: ['huge'] })],
  ]),
  tools: new ToolRegistry([huge]),
  resolveModel: () => model,
  mainModel: 'scripted:x',
  bus,
  limits: { maxTurns: 4, ...(limit ? { maxStoredOutputChars: limit } : {}) },
});
let peak = 0;
const sample = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage().rss);
}, 20);
const { tree } = await runtime.run({ agent: 'solo', task: 'go', userId: 'u' });
await store.runs.flush();
const runPeak = Math.max(peak, process.memoryUsage().rss);
const size = (name: string) => statSync(name, { throwIfNoEntry: false })?.size ?? 0;
const dbBytes = size(file) + size(`${file}-wal`);
peak = 0;
let started = performance.now();
let chars = 0;
for (const { event } of await store.runs.events('u', tree.id)) chars += JSON.stringify(event).length;
const wholeMs = performance.now() - started;
const wholePeak = Math.max(peak, process.memoryUsage().rss);
peak = 0;
started = performance.now();
let pagedChars = 0;
for await (const { event } of storedEventPages(store.runs, 'u', tree.id))
  pagedChars += JSON.stringify(event).length;
const pagedMs = performance.now() - started;
clearInterval(sample);
const mb = (bytes: number) => Number((bytes / 1024 / 1024).toFixed(1));
console.log(
  JSON.stringify({
    maxStoredOutputChars: limit ?? 'default (1,000,000)',
    toolCalls: tree.toolCalls.length,
    databaseMB: mb(dbBytes),
    runPeakRssMB: mb(runPeak),
    eventsReadWhole: { mb: mb(chars), ms: Math.round(wholeMs), peakRssMB: mb(wholePeak) },
    eventsReadPaged: { mb: mb(pagedChars), ms: Math.round(pagedMs) },
  }),
);
await store.close();
