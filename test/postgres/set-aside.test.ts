import { describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { freshSchema, TEST_DATABASE_URL } from '../helpers/postgres.ts';

// A parent job waiting on its children is set aside: it holds nothing until the last child ends and puts
// it back on the queue. Being set aside (or handed back by a stopping worker) never spends a try.

const place = () => ({ rootRunId: 'run_root', runId: 'run_root' });

describe.skipIf(!TEST_DATABASE_URL)('jobs set aside while their children run', () => {
  it('go back on the queue when their last child ends, as often as needed, without spending a try', async () => {
    const store = await openPostgresStore(await freshSchema('set_aside'));
    try {
      const jobs = await store.jobs();
      const lease = await jobs.enlist({ name: 'w', standing: true });
      await jobs.enqueue('tree', 'tree:run_root', { rootRunId: 'run_root' });
      const child = (n: number) => ({ key: `run:run_child_${n}`, id: jobs.jobId(`run:run_child_${n}`) });
      for (let round = 0; round < 4; round++) {
        const [parent] = await jobs.take(1, lease.id, place);
        expect(parent?.kind).toBe('tree');
        expect(parent?.resumed ?? false).toBe(round > 0);
        const children = [child(2 * round), child(2 * round + 1)];
        for (const { key } of children) await jobs.enqueue('run', key, { runId: key });
        expect(await jobs.suspend(parent!, [children[0]!.id, children[1]!.id])).toBe(true);
        // Set aside: under way, but nobody's to take.
        expect(await jobs.state('tree', 'tree:run_root')).toEqual({ state: 'waiting' });
        const taken = await jobs.take(5, lease.id, () => ({ rootRunId: 'run_root', runId: 'child' }));
        expect(taken.map((job) => job.kind)).toEqual(['run', 'run']);
        const parentJob = { kind: 'tree' as const, key: 'tree:run_root' };
        await jobs.complete(taken[0]!, { status: 'ok' }, parentJob);
        expect(await jobs.take(1, lease.id, place)).toEqual([]);
        await jobs.complete(taken[1]!, { status: 'ok' }, parentJob);
      }
      // Four times set aside and once handed back: two failures are still retried, the third dead-lettered.
      let [parent] = await jobs.take(1, lease.id, place);
      await jobs.handBack(parent!);
      [parent] = await jobs.take(1, lease.id, place);
      expect(parent?.resumed).toBe(true);
      for (let failure = 1; failure <= 2; failure++) {
        await jobs.fail(parent!, `failure ${failure}`);
        expect(await jobs.state('tree', 'tree:run_root')).toEqual({ state: 'waiting' });
        [parent] = await jobs.take(1, lease.id, place);
        expect(parent).toBeDefined();
      }
      await jobs.fail(parent!, 'failure 3');
      expect(await jobs.state('tree', 'tree:run_root')).toEqual({ state: 'failed', error: 'failure 3' });
    } finally {
      await store.close();
    }
  });

  it('are not set aside when every child they wait on has ended already', async () => {
    const store = await openPostgresStore(await freshSchema('set_aside_late'));
    try {
      const jobs = await store.jobs();
      const lease = await jobs.enlist({ name: 'w', standing: true });
      await jobs.enqueue('tree', 'tree:run_root', { rootRunId: 'run_root' });
      const [parent] = await jobs.take(1, lease.id, place);
      await jobs.enqueue('run', 'run:run_child', { runId: 'run_child' });
      const [child] = await jobs.take(1, lease.id, () => ({ rootRunId: 'run_root', runId: 'run_child' }));
      await jobs.complete(child!, { status: 'ok' });
      expect(await jobs.suspend(parent!, [child!.id])).toBe(false);
      expect(await jobs.state('tree', 'tree:run_root')).toEqual({ state: 'active' });
    } finally {
      await store.close();
    }
  });
});
