import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentDefinitionSchema } from '../core/agent-definition.ts';
import { Runtime } from '../core/runtime.ts';
import { ToolRegistry } from '../core/tool-registry.ts';
import { ScriptedModel } from '../models/scripted-model.ts';
import { calculateTool } from '../tools/compute/calculate.ts';
import { openDatabase } from './database.ts';
import { RunStore } from './run-store.ts';
import { SessionStore } from './session-store.ts';

function runtimeWith(store: RunStore) {
  const model = new ScriptedModel((request) => {
    if (request.system.includes('MAIN') && request.index === 0)
      return { toolCalls: [{ name: 'math', input: { task: '6*7' } }] };
    if (request.system.includes('MATH') && request.toolResults.length === 0) {
      return { toolCalls: [{ name: 'calculate', input: { expression: '6*7' } }] };
    }
    return { text: '42' };
  });
  const agents = new Map(
    [
      { name: 'main', description: 'm', instructions: 'MAIN', tools: ['math'] },
      { name: 'math', description: 'x', instructions: 'MATH', tools: ['calculate'] },
    ].map((input) => [input.name, agentDefinitionSchema.parse(input)]),
  );
  const runtime = new Runtime({
    agents,
    tools: new ToolRegistry([calculateTool]),
    resolveModel: () => model,
    mainModel: 'scripted:x',
  });
  store.attach(runtime.bus);
  return runtime;
}

describe('run store', () => {
  it('reads a run tree back exactly as it was built live', async () => {
    const db = openDatabase(':memory:');
    const store = new RunStore(db);
    const { tree } = await runtimeWith(store).run({ agent: 'main', task: 'what is 6*7' });
    expect(store.getRunTree(tree.id)).toEqual(tree);
    expect(store.getRunTree(tree.children[0]!.id)).toEqual(tree.children[0]);
    expect(store.listRuns()).toEqual([expect.objectContaining({ id: tree.id, status: 'ok', agent: 'main' })]);
    expect(store.getRunTree(tree.id, { userId: 'someone-else' })).toBeUndefined();
  });

  it('batches text but commits tool results, steps and run ends the moment they happen', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'store-')), 'cadre.db');
    const db = openDatabase(path);
    const store = new RunStore(db, { batchSize: 4, flushIntervalMs: 60_000 });
    const runtime = runtimeWith(store);
    const other = openDatabase(path);
    const count = (type: string) =>
      (other.prepare('SELECT COUNT(*) AS n FROM events WHERE type = ?').get(type) as { n: number }).n;
    const seen: string[] = [];
    runtime.bus.subscribe((event) => {
      // Each result is visible to another connection as soon as it is published (a crash keeps it).
      if (event.type === 'tool-result') {
        seen.push(event.type);
        expect(count('tool-result')).toBe(seen.length);
      }
    });
    await runtime.run({ agent: 'main', task: 'q' });
    expect(seen).toHaveLength(2);
    // No explicit flush: the run's end committed everything.
    const stored = (other.prepare('SELECT COUNT(*) AS n FROM events').get() as { n: number }).n;
    expect(stored).toBeGreaterThan(4);
    expect(count('run-finish')).toBe(2);
    const journal = (other.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode;
    expect(journal).toBe('wal');
  });

  it('commits every accepted message at once and keeps sessions per user', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'store-')), 'cadre.db');
    const sessions = new SessionStore(openDatabase(path));
    const session = sessions.create('local');
    sessions.append('local', session.id, { role: 'user', content: 'hello' });
    const reader = new SessionStore(openDatabase(path));
    expect(reader.get('local', session.id)!.messages.map((message) => message.content)).toEqual(['hello']);
    expect(reader.get('intruder', session.id)).toBeUndefined();
    expect(() => sessions.append('intruder', session.id, { role: 'user', content: 'x' })).toThrow(
      /no session/,
    );
  });
});

describe('event serialisation', () => {
  it('stores events whose tool output cannot be JSON-encoded', () => {
    const db = openDatabase(':memory:');
    const store = new RunStore(db);
    const cyclic: Record<string, unknown> = { big: 10n };
    cyclic.self = cyclic;
    const base = { runId: 'r1', parentRunId: null, depth: 0, agent: 'main', time: 1 };
    store.record({ ...base, seq: 0, type: 'run-start', task: 't', model: 'm:x' });
    store.record({
      ...base,
      seq: 1,
      type: 'tool-result',
      toolCallId: 'c',
      name: 'odd',
      ok: true,
      output: cyclic,
      ms: 1,
    });
    expect(() => store.flush()).not.toThrow();
    const body = (db.prepare('SELECT body FROM events WHERE seq = 1').get() as { body: string }).body;
    expect(JSON.parse(body).output).toEqual({ big: '10n', self: '[cycle]' });
  });
});
