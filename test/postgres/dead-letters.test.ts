import { describe, expect, it } from 'vitest';
import { TreeWorker } from '../../src/app/jobs/tree-worker.ts';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { freshSchema, TEST_DATABASE_URL } from '../helpers/postgres.ts';

// A job that fails on every try ends in the dead-letter queue; a worker then ends its run `error` with
// the last failure's reason, so the tree, the CLI and the page say why instead of showing it running.
describe.skipIf(!TEST_DATABASE_URL)('dead-lettered jobs', () => {
  it("end their run as error with the reason, and tell the parent's queue", async () => {
    const store = await openPostgresStore(await freshSchema('dead'));
    try {
      const base = { rootRunId: 'run_root', parentRunId: null, depth: 0, agent: 'main', time: 1 };
      store.runs.record({
        ...base,
        runId: 'run_root',
        seq: 0,
        type: 'run-start',
        task: 'q',
        model: 'm:x',
        userId: 'ann',
      });
      store.runs.record({
        ...base,
        runId: 'run_child',
        parentRunId: 'run_root',
        depth: 1,
        agent: 'math',
        seq: 0,
        type: 'run-start',
        task: 'sum',
        model: 'm:x',
        userId: 'ann',
      });
      await store.runs.flush();
      const jobs = await store.jobs();
      const data = {
        runId: 'run_child',
        journalId: 'jrn_1',
        request: { userId: 'ann', rootRunId: 'run_root', agent: 'math', task: 'sum' },
      };
      await jobs.enqueue('run', 'run:run_child', data);
      // The first try and both retries fail.
      for (let attempt = 0; attempt < 3; attempt++) {
        const place = () => ({ rootRunId: 'run_root', runId: 'run_child' });
        let [job] = await jobs.take(1, 'test-worker', place);
        for (let wait = 0; !job && wait < 50; wait++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          [job] = await jobs.take(1, 'test-worker', place);
        }
        expect(job?.retryCount).toBe(attempt);
        await jobs.fail(job!, `the tool server crashed (try ${attempt + 1})`);
      }
      expect(await jobs.state('run', 'run:run_child')).toEqual({
        state: 'failed',
        error: 'the tool server crashed (try 3)',
      });
      const worker = new TreeWorker(
        {
          store,
          jobs,
          runtime: () => {
            throw new Error('nothing should run');
          },
        },
        { concurrency: 1, name: 'sweeper' },
      );
      await worker.start();
      try {
        let child: { status: string; error?: string } | undefined;
        for (let wait = 0; wait < 100 && child?.status !== 'error'; wait++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          child = (await store.runs.getRunTree('ann', 'run_root'))?.children[0];
        }
        expect(child).toMatchObject({
          status: 'error',
          error: 'Failed on every worker that took it: the tool server crashed (try 3)',
        });
      } finally {
        await worker.stop({ drainMs: 0 });
      }
    } finally {
      await store.close();
    }
  }, 30_000);
});
