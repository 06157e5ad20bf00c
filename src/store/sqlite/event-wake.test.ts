import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runStart } from '../../../test/helpers/run-events.ts';
import { openSqliteStore } from './sqlite-store.ts';

describe('following a tree another process writes to the same SQLite file', () => {
  it('is woken by the write itself, not by a timer', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'event-wake-')), 'cadre.db');
    const [writer, follower] = [openSqliteStore(file), openSqliteStore(file)];
    const start = runStart('ann');
    let woken: () => void = () => {};
    const wake = new Promise<void>((resolve, reject) => {
      woken = resolve;
      setTimeout(() => reject(new Error('the follower was not woken')), 5_000).unref();
    });
    const unwatch = await follower.runs.watch!(start.rootRunId ?? start.runId, () => woken());
    writer.runs.record(start);
    await writer.runs.flush();
    await wake;
    expect((await follower.runs.events('ann', start.runId)).map((stored) => stored.event.type)).toEqual([
      'run-start',
    ]);
    unwatch();
    await writer.close();
    await follower.close();
    expect(openSqliteStore(':memory:').runs.watch).toBeUndefined();
  });
});
