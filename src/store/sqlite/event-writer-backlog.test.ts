import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { base, runStart, toolResult } from '../../../test/helpers/run-events.ts';
import { spoolDirFor } from './spool.ts';
import { openSqliteStore } from './sqlite-store.ts';

const STORE_MODULE = fileURLToPath(new URL('./sqlite-store.ts', import.meta.url));
const start = runStart('ann');

describe('the event writer under a load it only just keeps up with', () => {
  it('keeps neither every written event in memory nor every secured one in the spool', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'writer-backlog-')), 'cadre.db');
    // One event per slice, one slice per turn of the event loop: a backlog that never empties.
    const store = openSqliteStore(path, { events: { delayMs: 0, sliceMs: 0 } });
    store.runs.record(start);
    let seq = 1;
    for (; seq <= 50; seq++) store.runs.record({ ...base, seq, type: 'text-delta', delta: 'word ' });
    const spoolSize = () => {
      const [file] = readdirSync(spoolDirFor(path)).filter((name) => name.endsWith('.spool'));
      return statSync(join(spoolDirFor(path), file!)).size;
    };
    let largestSpool = 0;
    let longestQueue = 0;
    const turns = 3_000;
    for (let turn = 0; turn < turns; turn++, seq++) {
      const result = toolResult(seq, 'x'.repeat(1_200));
      store.runs.record(result);
      await new Promise((resolve) => setImmediate(resolve));
      longestQueue = Math.max(longestQueue, store.runs.writerStats.queueLength);
      if (turn % 50 === 0) largestSpool = Math.max(largestSpool, spoolSize());
    }
    // Everything recorded (3.6 MB of results) was in the spool at some point, never all of it at once.
    expect(largestSpool).toBeGreaterThan(100_000);
    expect(largestSpool).toBeLessThan(1_600_000);
    expect(longestQueue).toBeGreaterThan(0);
    expect(longestQueue).toBeLessThan(2_200);
    await store.runs.flush();
    const events = await store.runs.events('ann', 'r1');
    expect(events).toHaveLength(seq);
    expect(events.every((stored, index) => stored.cursor === index + 1 && stored.event.seq === index)).toBe(
      true,
    );
    expect(spoolSize()).toBe(0);
    await store.close();
  });

  it('loses nothing and stores nothing twice when killed while its spool is being rewritten under that load', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'writer-backlog-')), 'cadre.db');
    const script = `const { openSqliteStore } = await import(${JSON.stringify(STORE_MODULE)});
const store = openSqliteStore(${JSON.stringify(path)}, { events: { delayMs: 0, sliceMs: 0 } });
const base = ${JSON.stringify(base)};
store.runs.record(${JSON.stringify(start)});
let seq = 1;
for (; seq <= 50; seq++) store.runs.record({ ...base, seq, type: 'text-delta', delta: 'word ' });
for (; seq <= 2050; seq++) {
  store.runs.record({ ...base, seq, type: 'tool-result', toolCallId: 'c' + seq, name: 'f', ok: true, output: 'x'.repeat(1200), ms: 1 });
  await new Promise((resolve) => setImmediate(resolve));
}
process.kill(process.pid, 'SIGKILL');`;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(child.stderr).toBe('');
    expect(child.signal).toBe('SIGKILL');
    const store = openSqliteStore(path);
    const events = await store.runs.events('ann', 'r1');
    // Every result was secured before the kill; the table had most of them, the spool the rest.
    expect(events).toHaveLength(2051);
    expect(events.every((stored, index) => stored.cursor === index + 1 && stored.event.seq === index)).toBe(
      true,
    );
    await store.close();
  });
});
