import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toolResult } from '../../../test/helpers/run-events.ts';
import type { CadreEvent } from '../../core/events.ts';
import { SqlSessionStore } from '../sql/session-store.ts';
import { openDatabase } from './database.ts';
import { SqliteRunStore } from './run-store.ts';
import { SqliteSqlDatabase } from './sql-port.ts';

const base = { rootRunId: 'r1', runId: 'r1', parentRunId: null, depth: 0, agent: 'main', time: 1 };

function someEvents(count: number): CadreEvent[] {
  return [
    { ...base, seq: 0, type: 'run-start', task: 't', model: 'm:x', userId: 'local' },
    ...Array.from({ length: count - 1 }, (_, index) => ({
      ...base,
      seq: index + 1,
      type: 'text-delta' as const,
      delta: `word ${index} `,
    })),
  ];
}

describe('SQLite run store', () => {
  it('writes off the hot path: recording returns at once, and a crash loses only what was not yet written', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'store-')), 'cadre.db');
    const store = new SqliteRunStore(openDatabase(path), { delayMs: 60_000 });
    for (const event of someEvents(10)) store.record(event);
    const other = openDatabase(path);
    const count = () => (other.prepare('SELECT COUNT(*) AS n FROM events').get() as { n: number }).n;
    // The barrier before the next model request secures the run's start; its text waits for the writer.
    store.secure();
    expect(count()).toBe(1);
    await store.flush();
    expect(count()).toBe(10);
    const journal = (other.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode;
    expect(journal).toBe('wal');
  });

  it('secures tool results and steps before the next model request or at the end of the turn, a root end at once', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'store-')), 'cadre.db');
    // No spool here (a store built on its own), so securing commits.
    const store = new SqliteRunStore(openDatabase(path), { delayMs: 60_000 });
    const other = openDatabase(path);
    const count = (type: string) =>
      (other.prepare('SELECT COUNT(*) AS n FROM events WHERE type = ?').get(type) as { n: number }).n;
    for (const event of someEvents(5)) store.record(event);
    store.record({
      ...base,
      seq: 5,
      type: 'tool-result',
      toolCallId: 'c',
      name: 'f',
      ok: true,
      output: 1,
      ms: 1,
    });
    // The barrier before the next model request secures the result and the text before it.
    expect(count('tool-result')).toBe(0);
    store.secure();
    expect(count('tool-result')).toBe(1);
    expect(count('text-delta')).toBe(4);
    const step = {
      ...base,
      seq: 6,
      type: 'step-finish' as const,
      step: 0,
      finishReason: 'stop',
      usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
    };
    store.record(step);
    // Without a barrier, by the end of this turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    expect(count('step-finish')).toBe(1);
    store.record({
      ...base,
      seq: 7,
      type: 'run-finish',
      status: 'ok',
      summary: 'done',
      usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
      subtreeUsage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
    } as CadreEvent);
    expect(count('run-finish')).toBe(1);
  });

  it('holds the event loop for at most one short slice per turn, however many events wait', async () => {
    const store = new SqliteRunStore(openDatabase(':memory:'), { delayMs: 0, sliceMs: 2 });
    for (const event of someEvents(20_000)) store.record(event);
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    await store.flush();
    clearInterval(ticker);
    expect(turns).toBeGreaterThan(1);
    expect(await store.events('local', 'r1', { after: 19_990 })).toHaveLength(10);
  });

  it('stores an output that repeats once', async () => {
    const db = openDatabase(':memory:');
    const store = new SqliteRunStore(db);
    const output = { page: 'y'.repeat(20_000) };
    store.record(someEvents(1)[0]!);
    for (const seq of [1, 2, 3]) store.record(toolResult(seq, output));
    await store.flush();
    expect((db.prepare('SELECT COUNT(*) AS n FROM payloads').get() as { n: number }).n).toBe(1);
    const sizes = db.prepare('SELECT length(body) AS size FROM events WHERE seq > 0').all() as Array<{
      size: number;
    }>;
    for (const { size } of sizes) expect(size).toBeLessThan(400);
  });

  it('stores events whose tool output cannot be JSON-encoded', async () => {
    const db = openDatabase(':memory:');
    const store = new SqliteRunStore(db);
    const cyclic: Record<string, unknown> = { big: 10n };
    cyclic.self = cyclic;
    store.record(someEvents(1)[0]!);
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
    await store.flush();
    const [, stored] = await store.events('local', 'r1');
    expect((stored!.event as { output: unknown }).output).toEqual({ big: '10n', self: '[cycle]' });
  });

  it('commits every accepted message at once', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'store-')), 'cadre.db');
    const sessions = new SqlSessionStore(new SqliteSqlDatabase(openDatabase(path)));
    const session = await sessions.create('local');
    await sessions.append('local', session.id, { role: 'user', content: 'hello' });
    const reader = new SqlSessionStore(new SqliteSqlDatabase(openDatabase(path)));
    expect((await reader.get('local', session.id))!.messages.map((message) => message.content)).toEqual([
      'hello',
    ]);
  });
});
