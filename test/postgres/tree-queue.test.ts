import { describe, expect, it } from 'vitest';
import type { JobPlace, TreeQueue } from '../../src/store/job-queue.ts';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { freshSchema, TEST_DATABASE_URL } from '../helpers/postgres.ts';

// The whole TreeQueue's contract (the job engine's queue concern, beside the others' in
// job-concerns.test.ts): taking, heartbeats, ending (complete, fail, retried, dead), setting aside and
// handing back, and the state each step leaves. Two processes' queues on one database: what one does,
// the other sees. Leases and reaping have theirs in worker-leases.test.ts, dead letters' settling in
// dead-letters.test.ts.

/** Two queues on one fresh schema, as two processes would open it; closed when the test ends. */
async function twoQueues(name: string) {
  const url = await freshSchema(name);
  const stores = [await openPostgresStore(url), await openPostgresStore(url)];
  const first: TreeQueue = await stores[0]!.jobs();
  const second: TreeQueue = await stores[1]!.jobs();
  return { first, second, close: () => Promise.all(stores.map((store) => store.close())) };
}

const place = (job: { data: unknown }): JobPlace => {
  const { runId } = job.data as { runId: string };
  return { rootRunId: 'run_root', runId };
};

describe.skipIf(!TEST_DATABASE_URL)('TreeQueue, on PostgreSQL', () => {
  it('takes each job once, sub-agent runs before trees, up to the count asked; the state follows it to its end', async () => {
    const { first, second, close } = await twoQueues('queue_take');
    try {
      const [a, b] = [
        await first.enlist({ name: 'a', standing: true }),
        await second.enlist({ name: 'b', standing: true }),
      ];
      expect(await first.state('tree', 'tree:run_root')).toEqual({ state: 'missing' });
      await first.enqueue('tree', 'tree:run_root', { runId: 'run_root' });
      // Enqueued again (a retried dispatch): the one job stays as it is.
      await second.enqueue('tree', 'tree:run_root', { runId: 'run_root', again: true });
      await first.enqueue('run', 'run:run_child', { runId: 'run_child' });
      expect(await second.state('tree', 'tree:run_root')).toEqual({ state: 'waiting' });

      const [run] = await second.take(1, b.id, place);
      expect(run).toMatchObject({ kind: 'run', data: { runId: 'run_child' }, retryCount: 0 });
      expect(run!.id).toBe(first.jobId('run:run_child'));
      const taken = await first.take(5, a.id, place);
      expect(taken).toHaveLength(1);
      expect(taken[0]).toMatchObject({ kind: 'tree', data: { runId: 'run_root' }, retryCount: 0 });
      expect(taken[0]!.resumed ?? false).toBe(false);
      expect(await first.take(5, a.id, place)).toEqual([]);
      expect(await second.state('tree', 'tree:run_root')).toEqual({ state: 'active' });

      await second.complete(run!, { status: 'ok', summary: 'found' });
      expect(await first.state('run', 'run:run_child')).toEqual({
        state: 'completed',
        output: { status: 'ok', summary: 'found' },
      });
      await first.complete(taken[0]!, { status: 'ok' });
      expect(await second.state('tree', 'tree:run_root')).toEqual({
        state: 'completed',
        output: { status: 'ok' },
      });
      await Promise.all([a.release(), b.release()]);
    } finally {
      await close();
    }
  });

  it("finds a session's tree no worker has taken yet, and no longer once one has", async () => {
    const { first, second, close } = await twoQueues('queue_waiting_tree');
    try {
      const worker = await second.enlist({ name: 'b', standing: true });
      const tree = (rootRunId: string, userId: string, sessionId: string) => ({
        rootRunId,
        userId,
        spec: { sessionId, answerId: `msg_${rootRunId}` },
      });
      expect(await first.waitingTree('alice', 'ses_1')).toBeUndefined();
      await first.enqueue('tree', 'tree:run_a', tree('run_a', 'alice', 'ses_1'));
      await first.enqueue('tree', 'tree:run_other', tree('run_other', 'bob', 'ses_1'));
      // Seen from another process; only the caller's session's.
      expect(await second.waitingTree('alice', 'ses_1')).toEqual({
        rootRunId: 'run_a',
        answerId: 'msg_run_a',
      });
      expect(await second.waitingTree('alice', 'ses_2')).toBeUndefined();
      expect(await second.waitingTree('bob', 'ses_1')).toMatchObject({ rootRunId: 'run_other' });
      const taken = await second.take(2, worker.id, () => ({ rootRunId: 'run_a', runId: 'run_a' }));
      expect(taken).toHaveLength(2);
      expect(await first.waitingTree('alice', 'ses_1')).toBeUndefined();
      // Handed back after it began (its worker stopped): it is not waiting to begin any more.
      const alices = taken.find((job) => (job.data as { rootRunId: string }).rootRunId === 'run_a')!;
      await second.handBack(alices);
      expect(await second.state('tree', 'tree:run_a')).toEqual({ state: 'waiting' });
      expect(await first.waitingTree('alice', 'ses_1')).toBeUndefined();
      await worker.release();
    } finally {
      await close();
    }
  });

  it('keeps a job its worker heartbeats; a failed try is retried for another worker, and the first then hears it lost it and cannot end it', async () => {
    const { first, second, close } = await twoQueues('queue_heartbeat');
    try {
      const [a, b] = [
        await first.enlist({ name: 'a', standing: true }),
        await second.enlist({ name: 'b', standing: true }),
      ];
      await first.enqueue('tree', 'tree:run_root', { runId: 'run_root' });
      const [job] = await first.take(1, a.id, place);
      expect(await first.heartbeat([job!], a.id)).toEqual([]);
      // Not b's: a heartbeat from it names the job as one it does not hold.
      expect(await second.heartbeat([job!], b.id)).toEqual([job]);

      await first.fail(job!, 'the model provider was down');
      expect(await second.state('tree', 'tree:run_root')).toEqual({ state: 'waiting' });
      const [again] = await second.take(1, b.id, place);
      expect(again).toMatchObject({ id: job!.id, retryCount: 1 });
      expect(await first.heartbeat([job!], a.id)).toEqual([job]);
      expect(await second.heartbeat([again!], b.id)).toEqual([]);
      // The first try, ended late, leaves the second alone.
      await first.complete(job!, { status: 'ok', from: 'a' });
      expect(await second.state('tree', 'tree:run_root')).toEqual({ state: 'active' });
      await second.complete(again!, { status: 'ok', from: 'b' });
      expect(await first.state('tree', 'tree:run_root')).toEqual({
        state: 'completed',
        output: { status: 'ok', from: 'b' },
      });
      await Promise.all([a.release(), b.release()]);
    } finally {
      await close();
    }
  });

  it('fails a job for good once its tries are spent: its state says why, and it waits as a dead letter', async () => {
    const { first, second, close } = await twoQueues('queue_fail');
    try {
      const a = await first.enlist({ name: 'a', standing: true });
      await first.enqueue('run', 'run:run_child', { runId: 'run_child' });
      let failures = 0;
      for (;;) {
        const [job] = await first.take(1, a.id, place);
        if (!job) break;
        expect(job.retryCount).toBe(failures);
        await first.fail(job, `failure ${++failures}`);
      }
      expect(failures).toBeGreaterThan(1);
      expect(await second.state('run', 'run:run_child')).toEqual({
        state: 'failed',
        error: `failure ${failures}`,
      });
      const dead = await second.takeDead(10);
      expect(dead).toEqual([
        expect.objectContaining({
          sourceId: first.jobId('run:run_child'),
          kind: 'run',
          error: `failure ${failures}`,
        }),
      ]);
      await second.settleDead(dead[0]!);
      expect(await first.takeDead(10)).toEqual([]);
      await a.release();
    } finally {
      await close();
    }
  });

  it('sets a parent aside until its last child ends, and takes a handed-back job again resumed (that neither spends a try: set-aside.test.ts)', async () => {
    const { first, second, close } = await twoQueues('queue_aside');
    try {
      const [a, b] = [
        await first.enlist({ name: 'a', standing: true }),
        await second.enlist({ name: 'b', standing: true }),
      ];
      await first.enqueue('tree', 'tree:run_root', { runId: 'run_root' });
      const [parent] = await first.take(1, a.id, place);
      await first.enqueue('run', 'run:run_child', { runId: 'run_child' });
      expect(await first.suspend(parent!, [first.jobId('run:run_child')])).toBe(true);
      // Set aside: nobody's to take until its child ends.
      expect(await second.state('tree', 'tree:run_root')).toEqual({ state: 'waiting' });
      const [child] = await second.take(5, b.id, place);
      expect(child?.kind).toBe('run');
      expect(await second.take(5, b.id, place)).toEqual([]);
      await second.complete(child!, { status: 'ok' }, { kind: 'tree', key: 'tree:run_root' });

      const [woken] = await second.take(1, b.id, place);
      expect(woken).toMatchObject({ id: parent!.id, resumed: true });
      // Handed back by a worker that is stopping: taken again as it was, by any worker.
      await second.handBack(woken!);
      expect(await first.state('tree', 'tree:run_root')).toEqual({ state: 'waiting' });
      const [back] = await first.take(1, a.id, place);
      expect(back).toMatchObject({ id: parent!.id, resumed: true });
      await first.complete(back!, { status: 'ok' });
      expect(await second.state('tree', 'tree:run_root')).toEqual({
        state: 'completed',
        output: { status: 'ok' },
      });
      await Promise.all([a.release(), b.release()]);
    } finally {
      await close();
    }
  });

  it('counts tries as pg-boss does, less set-asides and hand-backs; shows workers, parents set aside and dead letters, and drops one', async () => {
    const { first, second, close } = await twoQueues('queue_operator');
    try {
      const a = await first.enlist({ name: 'a', standing: true, concurrency: 3 });
      await first.enqueue('tree', 'tree:run_root', { runId: 'run_root' });
      const [taken] = await first.take(1, a.id, place);
      expect(taken).toMatchObject({ retryCount: 0, tries: 1 });
      await first.enqueue('run', 'run:run_child', { runId: 'run_child' });
      expect(await first.suspend(taken!, [first.jobId('run:run_child')])).toBe(true);
      const [aside] = await second.setAside();
      expect(aside).toMatchObject({
        jobId: taken!.id,
        kind: 'tree',
        data: { runId: 'run_root' },
        waitingOn: 1,
      });
      const [child] = await first.take(1, a.id, place);
      await first.reportSlots(a.id, 1);
      const [seen] = await second.workers();
      expect(seen).toMatchObject({ name: 'a', alive: true, standing: true, concurrency: 3, slotsUsed: 1 });
      expect(seen!.jobs).toEqual([
        expect.objectContaining({ jobId: child!.id, kind: 'run', rootRunId: 'run_root', runId: 'run_child' }),
      ]);
      await first.complete(child!, { status: 'ok' }, { kind: 'tree', key: 'tree:run_root' });
      expect(await second.setAside()).toEqual([]);

      // Put back twice (set aside, then handed back): pg-boss counts two retries, neither a try.
      const [woken] = await first.take(1, a.id, place);
      expect(woken).toMatchObject({ resumed: true, tries: 1 });
      await first.handBack(woken!);
      const [back] = await first.take(1, a.id, place);
      expect(back).toMatchObject({ retryCount: 2, tries: 1 });
      await first.fail(back!, 'first real failure');
      const [retried] = await first.take(1, a.id, place);
      expect(retried).toMatchObject({ retryCount: 3, tries: 2 });
      await first.fail(retried!, 'second real failure');
      const [last] = await first.take(1, a.id, place);
      expect(last).toMatchObject({ tries: 3 });
      await first.fail(last!, 'third real failure');
      expect(await first.take(1, a.id, place)).toEqual([]);

      const failures = await second.failures(10);
      expect(failures).toEqual([
        expect.objectContaining({
          id: taken!.id,
          kind: 'tree',
          state: 'failed',
          tries: 3,
          error: 'third real failure',
          data: { runId: 'run_root' },
        }),
      ]);
      expect(await second.find('tree:run_root')).toMatchObject({ id: taken!.id, state: 'failed' });
      expect(await second.find(taken!.id)).toMatchObject({ kind: 'tree' });
      expect(await second.find('run:run_child')).toMatchObject({ state: 'completed', tries: 1 });
      expect(await second.drop('run', 'run:run_child')).toBe(false);
      expect(await second.drop('tree', taken!.id)).toBe(true);
      expect(await first.failures(10)).toEqual([]);
      expect(await first.find('tree:run_root')).toBeUndefined();
      await a.release();
    } finally {
      await close();
    }
  });
});
