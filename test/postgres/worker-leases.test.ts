import { describe, expect, it } from 'vitest';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { freshSchema, recordRootStart, TEST_DATABASE_URL } from '../helpers/postgres.ts';

// A worker holds a lease (an advisory lock on a connection of its own) and the queue records which jobs it
// holds. When its process dies the database lets go of the lease at once, and the next process to look
// reaps its jobs: back on the queue when a worker that stays can take them, else closed `interrupted`.
// Each store here stands for one process; closing one ends its connections as its death would.

const place = () => ({ rootRunId: 'run_root', runId: 'run_root' });

/** A tree recorded as running, its job enqueued and taken by a worker of `holder` that then dies. */
async function treeHeldByGoneWorker(url: string): Promise<void> {
  const holder = await openPostgresStore(url);
  await recordRootStart(holder, { runId: 'run_root', userId: 'ann', task: 'a long question' });
  const jobs = await holder.jobs();
  const lease = await jobs.enlist({ name: 'doomed', standing: false });
  await jobs.enqueue('tree', 'tree:run_root', { rootRunId: 'run_root', userId: 'ann' });
  const [job] = await jobs.take(1, lease.id, place);
  expect(job).toBeDefined();
  // The process goes away without letting go of anything itself.
  await holder.close();
}

async function rootStatus(store: PostgresStore): Promise<string | undefined> {
  return (await store.runs.getRunTree('ann', 'run_root'))?.status;
}

describe.skipIf(!TEST_DATABASE_URL)('worker leases', () => {
  it("put a gone worker's job back on the queue at once when a standing worker is alive", async () => {
    const url = await freshSchema('lease_retry');
    await treeHeldByGoneWorker(url);
    const survivor = await openPostgresStore(url);
    try {
      const jobs = await survivor.jobs();
      const lease = await jobs.enlist({ name: 'stays', standing: true });
      const started = performance.now();
      expect(await survivor.runs.markInterrupted()).toEqual([]);
      // Not after pg-boss's 10 s heartbeat window: the lease said so at once.
      const [retried] = await jobs.take(1, lease.id, place);
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(retried).toMatchObject({ kind: 'tree', retryCount: 1 });
      expect(await rootStatus(survivor)).toBe('running');
      // Reaped once: looking again finds nothing more to do.
      expect(await survivor.runs.markInterrupted()).toEqual([]);
      expect(await jobs.state('tree', 'tree:run_root')).toEqual({ state: 'active' });
    } finally {
      await survivor.close();
    }
  });

  it("close a gone worker's tree interrupted, and take its job off the queue, when no worker could take it", async () => {
    const url = await freshSchema('lease_interrupt');
    await treeHeldByGoneWorker(url);
    const next = await openPostgresStore(url);
    try {
      expect(await next.runs.markInterrupted()).toEqual(['run_root']);
      const tree = await next.runs.getRunTree('ann', 'run_root');
      expect(tree?.status).toBe('interrupted');
      expect(tree?.error).toMatch(
        /^Interrupted: the process running it \(pid \d+ on .+\) ended before it finished\. No other worker was there to take it\.$/,
      );
      const jobs = await next.jobs();
      // A worker starting later does not run it: resuming it is the person's choice (`cadre runs resume`).
      const lease = await jobs.enlist({ name: 'later', standing: true });
      expect(await jobs.take(1, lease.id, place)).toEqual([]);
      expect((await jobs.state('tree', 'tree:run_root')).state).toBe('failed');
    } finally {
      await next.close();
    }
  });

  it('tell a worker judged gone while it was not that the job is no longer its own', async () => {
    const url = await freshSchema('lease_lost');
    const store = await openPostgresStore(url);
    try {
      const jobs = await store.jobs();
      const lease = await jobs.enlist({ name: 'slow', standing: true });
      await jobs.enqueue('tree', 'tree:run_root', { rootRunId: 'run_root', userId: 'ann' });
      const [job] = await jobs.take(1, lease.id, place);
      expect(await jobs.heartbeat([job!], lease.id)).toEqual([]);
      // Another process reaped it (the lease looked gone during a network cut, say).
      await store.database.query('DELETE FROM job_holders');
      expect(await jobs.heartbeat([job!], lease.id)).toEqual([job]);
      await lease.release();
    } finally {
      await store.close();
    }
  });
});
