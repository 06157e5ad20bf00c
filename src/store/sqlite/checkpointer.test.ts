import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSqliteStore } from './sqlite-store.ts';

describe('background checkpoints', () => {
  it('copy the WAL into the database file from a worker once runs are written, not in a commit', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'checkpoint-')), 'cadre.db');
    const store = openSqliteStore(path, { checkpoints: { delayMs: 0 } });
    const autocheckpoint = () =>
      (store.database.prepare('PRAGMA wal_autocheckpoint').get() as { wal_autocheckpoint: number })
        .wal_autocheckpoint;
    // A store that writes no runs starts no thread and keeps SQLite's own checkpoints.
    expect(autocheckpoint()).toBe(1000);
    const sizeBefore = statSync(path).size;
    const base = { rootRunId: 'r1', runId: 'r1', parentRunId: null, depth: 0, agent: 'main', time: 1 };
    store.runs.record({ ...base, seq: 0, type: 'run-start', task: 't', model: 'm:x', userId: 'local' });
    for (let seq = 1; seq <= 200; seq++)
      store.runs.record({ ...base, seq, type: 'text-delta', delta: 'word '.repeat(50) });
    await store.runs.flush();
    // The main connection now checkpoints only as a fallback, far past what it wrote here (a few pages),
    // so the database file can only grow by the worker's checkpoint.
    expect(autocheckpoint()).toBe(10_000);
    const deadline = Date.now() + 10_000;
    while (statSync(path).size === sizeBefore && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(statSync(path).size).toBeGreaterThan(sizeBefore);
    await store.close();
  });

  it('do not start a worker for a store closed within the delay after its first write (a short command)', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'checkpoint-')), 'cadre.db');
    const store = openSqliteStore(path, { checkpoints: { delayMs: 200 } });
    const autocheckpoint = () =>
      (store.database.prepare('PRAGMA wal_autocheckpoint').get() as { wal_autocheckpoint: number })
        .wal_autocheckpoint;
    const base = { rootRunId: 'r1', runId: 'r1', parentRunId: null, depth: 0, agent: 'main', time: 1 };
    store.runs.record({ ...base, seq: 0, type: 'run-start', task: 't', model: 'm:x', userId: 'local' });
    await store.runs.flush();
    // No worker started, so closing does not wait 40-65 ms for one to load; meanwhile the main connection
    // no longer checkpoints at SQLite's 1,000 pages (the worker is on its way).
    expect(store.checkpointsInBackground).toBe(false);
    expect(autocheckpoint()).toBe(10_000);
    await store.close();
  });

  it('start the worker once the delay has passed and the WAL has grown, not before however long it runs', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'checkpoint-')), 'cadre.db');
    // The WAL is looked at when the writer commits, on a clock the test moves: no timer runs meanwhile.
    let clock = 0;
    const store = openSqliteStore(path, {
      checkpoints: { delayMs: 50, minWalBytes: 512 * 1024, now: () => clock },
    });
    try {
      const autocheckpoint = () =>
        (store.database.prepare('PRAGMA wal_autocheckpoint').get() as { wal_autocheckpoint: number })
          .wal_autocheckpoint;
      const base = { rootRunId: 'r1', runId: 'r1', parentRunId: null, depth: 0, agent: 'main', time: 1 };
      store.runs.record({ ...base, seq: 0, type: 'run-start', task: 't', model: 'm:x', userId: 'local' });
      await store.runs.flush();
      // A few pages, looked at five times over a quarter of a second of writes: not worth a thread.
      for (let seq = 1; seq <= 5; seq++) {
        clock += 50;
        store.runs.record({ ...base, seq, type: 'text-delta', delta: 'word ' });
        await store.runs.flush();
      }
      expect(store.checkpointsInBackground).toBe(false);
      expect(autocheckpoint()).toBe(10_000);
      // Grown past the threshold, but within the delay of the last look: not looked at yet.
      for (let seq = 6; seq <= 320; seq++)
        store.runs.record({ ...base, seq, type: 'text-delta', delta: 'word '.repeat(500) });
      await store.runs.flush();
      expect(store.checkpointsInBackground).toBe(false);
      // The next commit after the delay looks, and starts the worker.
      clock += 50;
      store.runs.record({ ...base, seq: 321, type: 'text-delta', delta: 'word ' });
      await store.runs.flush();
      expect(store.checkpointsInBackground).toBe(true);
      expect(autocheckpoint()).toBe(10_000);
    } finally {
      await store.close();
    }
  });
});
