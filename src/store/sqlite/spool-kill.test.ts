import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openSqliteStore } from './sqlite-store.ts';

const STORE_MODULE = fileURLToPath(new URL('./sqlite-store.ts', import.meta.url));

/**
 * A child that records a run as fast as it can (text, a tool result every few events, its journal entry,
 * a large output now and then) and prints each sequence number secured by the barrier the runtime passes
 * before each model request.
 */
function recordUntilKilled(path: string, killAfterMs: number): Promise<number> {
  const script = `const { openSqliteStore } = await import(${JSON.stringify(STORE_MODULE)});
const store = openSqliteStore(${JSON.stringify(path)}, { events: { delayMs: 1, sliceMs: 1 } });
const base = { rootRunId: 'r1', runId: 'r1', parentRunId: null, depth: 0, agent: 'main', time: 1 };
store.runs.record({ ...base, seq: 0, type: 'run-start', task: 't', model: 'm:x', userId: 'ann' });
const journal = await store.journal.open('j');
process.stdout.write('0\\n');
for (let seq = 1; ; seq++) {
  if (seq % 5) store.runs.record({ ...base, seq, type: 'text-delta', delta: 'word ' });
  else {
    const output = seq % 15 ? seq : { page: String(seq).repeat(3000) };
    store.runs.record({ ...base, seq, type: 'tool-result', toolCallId: 'c' + seq, name: 'f', ok: true, output, ms: 1 });
    journal.put('r', 'tool-result', String(seq), { seq });
    // The barrier the runtime passes before the next model request.
    store.runs.secure();
    process.stdout.write(seq + '\\n');
  }
  if (seq % 3 === 0) await new Promise((resolve) => setImmediate(resolve));
}`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script]);
  let out = '';
  child.stdout.on('data', (chunk) => {
    out += chunk;
    if (out.length > 2 && !child.killed) setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  });
  return new Promise((resolve) =>
    child.on('exit', () => {
      const secured = out.split('\n').filter((line) => /^\d+$/.test(line));
      resolve(Number(secured.at(-1) ?? -1));
    }),
  );
}

describe('a process killed at any moment while recording', () => {
  it('leaves every secured event and journal entry, once each, gap-free, for the next store', async () => {
    for (const killAfterMs of [0, 3, 7, 15, 30, 60, 120]) {
      const path = join(mkdtempSync(join(tmpdir(), 'spool-kill-')), 'cadre.db');
      const lastSecured = await recordUntilKilled(path, killAfterMs);
      expect(lastSecured).toBeGreaterThanOrEqual(0);
      const store = openSqliteStore(path);
      const events = await store.runs.events('ann', 'r1');
      expect(events.length).toBeGreaterThan(lastSecured);
      expect(events.every((row, index) => row.cursor === index + 1 && row.event.seq === index)).toBe(true);
      const big = events.find((row) => row.event.seq === 15);
      if (big) expect((big.event as { output: unknown }).output).toEqual({ page: '15'.repeat(3000) });
      const journal = await store.journal.open('j');
      for (let seq = 5; seq <= lastSecured; seq += 5)
        expect(journal.get('r', 'tool-result', String(seq))).toEqual({ seq });
      await store.close();
    }
  });
});
