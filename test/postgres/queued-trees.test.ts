import { describe } from 'vitest';
import { QueuedTrees } from '../../src/app/jobs/queued-trees.ts';
import { TreeWorker } from '../../src/app/jobs/tree-worker.ts';
import { LiveRuns } from '../../src/app/live-runs.ts';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { contractRuntime, treeExecutorContract } from '../executor/tree-executor-contract.ts';
import { freshSchema, TEST_DATABASE_URL } from '../helpers/postgres.ts';

// Trees run as jobs on PostgreSQL: the executor contract its in-process twin holds
// (test/executor/in-process-trees.test.ts). The asker and a worker each have their own store on one
// fresh schema, as two processes would.
describe.skipIf(!TEST_DATABASE_URL)(
  'QueuedTrees on PostgreSQL, with a worker, holds the executor contract',
  () => {
    treeExecutorContract(async () => {
      const url = await freshSchema('executor');
      const asking = await openPostgresStore(url);
      const working = await openPostgresStore(url);
      const worker = new TreeWorker(
        { store: working, jobs: await working.jobs(), runtime: async () => contractRuntime(working) },
        { concurrency: 2, standing: true },
      );
      await worker.start();
      const live = new LiveRuns();
      return {
        executor: new QueuedTrees({ store: asking, live, jobs: () => asking.jobs() }),
        store: asking,
        live,
        close: async () => {
          await worker.stop({ drainMs: 0 });
          await Promise.all([asking.close(), working.close()]);
        },
      };
    }, 40_000);
  },
);
