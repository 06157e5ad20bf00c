import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSqliteStore } from './sqlite-store.ts';

const start = {
  rootRunId: 'r1',
  runId: 'r1',
  parentRunId: null,
  depth: 0,
  agent: 'main',
  time: 1,
  seq: 0,
  type: 'run-start' as const,
  task: 't',
  model: 'm:x',
  userId: 'local',
};

/** Resolves on the first call of the listener it hands out. */
function firstCall(): { listener: () => void; called: Promise<void> } {
  let listener = () => {};
  const called = new Promise<void>((resolve) => {
    listener = resolve;
  });
  return { listener, called };
}

describe('stop requests on SQLite wake the process running the tree, with no timer', () => {
  it('a stop asked through another store on the same file wakes the watcher, which takes it', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'stops-')), 'cadre.db');
    const running = openSqliteStore(path);
    const asking = openSqliteStore(path);
    try {
      running.runs.record(start);
      await running.runs.flush();
      const { listener, called } = firstCall();
      const unwatch = running.runs.watchStops(listener);
      expect(await asking.runs.requestStop('local', 'r1', 'stopped from the page')).toBe(true);
      await called;
      expect(await running.runs.takeStopRequests(['r1'])).toEqual(new Map([['r1', 'stopped from the page']]));
      unwatch();
    } finally {
      await asking.close();
      await running.close();
    }
  });

  it('a stop asked in the same process calls the watcher at once', async () => {
    const store = openSqliteStore(':memory:');
    try {
      store.runs.record(start);
      await store.runs.flush();
      let calls = 0;
      const unwatch = store.runs.watchStops(() => calls++);
      // Once when watching has begun (as on PostgreSQL, once listening): a stop asked just before is found.
      await new Promise<void>((resolve) => queueMicrotask(resolve));
      expect(calls).toBe(1);
      await store.runs.requestStop('local', 'r1', 'stopped');
      expect(calls).toBe(2);
      unwatch();
      await store.runs.requestStop('local', 'r1', 'again');
      expect(calls).toBe(2);
    } finally {
      await store.close();
    }
  });
});
