import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runStart, textDelta, toolResult } from '../../../test/helpers/run-events.ts';
import type { CadreEvent } from '../../core/events.ts';
import { openDatabase } from './database.ts';
import { readSpool, spoolDirFor } from './spool.ts';
import { openSqliteStore } from './sqlite-store.ts';

const STORE_MODULE = fileURLToPath(new URL('./sqlite-store.ts', import.meta.url));

const start = runStart('ann');
const delta = textDelta;
const result = (seq: number) => toolResult(seq);

function dataPath(): string {
  return join(mkdtempSync(join(tmpdir(), 'writer-failures-')), 'cadre.db');
}

describe('the event writer when SQLite refuses a write', () => {
  it('waits for a write lock another process holds too long, reports it once, and writes everything after', async () => {
    const path = dataPath();
    const store = openSqliteStore(path);
    const errors: unknown[] = [];
    store.runs.onWriteError = (error) => errors.push(error);
    // Another process holds the write lock longer than this connection waits for it.
    const other = openDatabase(path);
    other.exec('BEGIN IMMEDIATE');
    store.database.exec('PRAGMA busy_timeout = 10');
    for (const event of [start, delta(1), result(2)]) store.runs.record(event);
    const flushed = store.runs.flush();
    // The lock is let go once the writer has met it (and said so), not after a guess at how long that takes.
    const deadline = Date.now() + 10_000;
    while (!errors.length && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
    other.exec('COMMIT');
    other.close();
    await flushed;
    expect(errors.length).toBe(1);
    expect(String(errors[0])).toMatch(/locked|busy/i);
    const events = await store.runs.events('ann', 'r1');
    expect(events.map((stored) => [stored.cursor, stored.event.seq])).toEqual([
      [1, 0],
      [2, 1],
      [3, 2],
    ]);
    await store.close();
  });

  it('drops only an event SQLite cannot take, so the writer neither spins nor loses the others', async () => {
    const store = openSqliteStore(':memory:');
    const errors: unknown[] = [];
    store.runs.onWriteError = (error) => errors.push(error);
    store.runs.record(start);
    store.runs.record(delta(1));
    // A run start without its task cannot be bound to the runs row.
    store.runs.record({ ...start, runId: 'r2', rootRunId: 'r2', task: undefined } as unknown as CadreEvent);
    store.runs.record(delta(2));
    await store.runs.flush();
    expect(errors).toHaveLength(1);
    const events = await store.runs.events('ann', 'r1');
    expect(events.map((stored) => [stored.cursor, stored.event.seq])).toEqual([
      [1, 0],
      [2, 1],
      [3, 2],
    ]);
    await store.close();
  });

  it('closes at once when every write fails, keeping the spool for the next store to apply', async () => {
    const path = dataPath();
    // In a child, so a writer that retried for ever could not hang this test run.
    const script = `const { openSqliteStore } = await import(${JSON.stringify(STORE_MODULE)});
const store = openSqliteStore(${JSON.stringify(path)});
let reported = 0;
store.runs.onWriteError = () => reported++;
store.database.exec('PRAGMA query_only = 1');
for (const event of ${JSON.stringify([start, delta(1), result(2), delta(3)])}) store.runs.record(event);
await store.runs.flush();
await store.close();
process.stdout.write(String(reported));`;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(child.signal).toBeNull();
    expect(child.stderr).toBe('');
    expect(Number(child.stdout)).toBeGreaterThanOrEqual(1);
    expect(readdirSync(spoolDirFor(path))).toHaveLength(1);
    const store = openSqliteStore(path);
    const events = await store.runs.events('ann', 'r1');
    expect(events.map((stored) => stored.event.seq)).toEqual([0, 1, 2, 3]);
    expect(readdirSync(spoolDirFor(path))).toEqual([]);
    await store.close();
  });

  it('commits at the barrier when the spool cannot be written (its folder is a file), saying so once', async () => {
    const path = dataPath();
    writeFileSync(spoolDirFor(path), 'not a folder');
    const store = openSqliteStore(path, { events: { delayMs: 60_000 } });
    const errors: unknown[] = [];
    store.runs.onWriteError = (error) => errors.push(error);
    for (const event of [start, delta(1), result(2), result(3)]) store.runs.record(event);
    // The barrier before the next model request.
    store.runs.secure();
    expect(errors).toHaveLength(1);
    // Committed by the barrier, without waiting for the minute-long slice delay.
    const raw = openDatabase(path);
    expect((raw.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n).toBe(4);
    raw.close();
    await store.close();
  });

  it('keeps only what it dropped in the spool afterwards, so the spool does not grow with every later event', async () => {
    const path = dataPath();
    const store = openSqliteStore(path);
    store.runs.onWriteError = () => {};
    const bad = { ...start, runId: 'r2', rootRunId: 'r2', task: undefined } as unknown as CadreEvent;
    for (const event of [start, delta(1), bad, result(2)]) store.runs.record(event);
    await store.runs.flush();
    const [file] = readdirSync(spoolDirFor(path));
    const spool = join(spoolDirFor(path), file!);
    const onlyTheDropped = readFileSync(spool, 'utf8');
    expect(
      readSpool(spool).map((record) => record.kind === 'event' && JSON.parse(record.body).runId),
    ).toEqual(['r2']);
    for (let seq = 3; seq < 50; seq++) store.runs.record(result(seq));
    await store.runs.flush();
    expect(readFileSync(spool, 'utf8')).toBe(onlyTheDropped);
    await store.close();
    // Kept at close for the next start, which tries it again.
    expect(readdirSync(spoolDirFor(path))).toEqual([file]);
  });
});
