import { describe, expect, it } from 'vitest';
import { treeJobKey } from '../../src/app/jobs/forget-jobs.ts';
import type { TreeJobData } from '../../src/app/jobs/job-data.ts';
import { TreeWorker } from '../../src/app/jobs/tree-worker.ts';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { contractRuntime } from '../executor/tree-executor-contract.ts';
import { freshSchema, TEST_DATABASE_URL } from '../helpers/postgres.ts';

// A tree run as jobs answers in its session whether or not its asker is still there: the worker that ends
// the root folds the tree's stored events (its sub-agent ran in another job) and stores the answer before
// the job ends. Here nobody follows the tree at all, as when the asking process died after queueing it.
describe.skipIf(!TEST_DATABASE_URL)('the answer of a tree run as jobs', () => {
  it('is stored by the worker that ends its root, with no asker following it', async () => {
    const url = await freshSchema('answer');
    const store = await openPostgresStore(url);
    const worker = new TreeWorker(
      { store, jobs: await store.jobs(), runtime: async () => contractRuntime(store) },
      { concurrency: 2, standing: true },
    );
    try {
      const session = await store.sessions.create('local', { title: 'tides' });
      const jobs = await store.jobs();
      const rootRunId = 'run_askergone0000000001';
      const key = treeJobKey(rootRunId);
      const data: TreeJobData = {
        journalId: 'jrn_askergone',
        userId: 'local',
        rootRunId,
        spec: {
          agent: 'main',
          task: 'delegate the tide',
          history: [],
          inputs: {},
          sessionId: session.id,
          answerId: 'msg_askergone',
        },
      };
      // Told when the job ends (NOTIFY `ended`), and looked at once listening, for an end said before.
      const ended = new Promise<void>((resolve) => {
        const look = async () => {
          const state = await jobs.state('tree', key);
          if (state.state === 'completed' || state.state === 'failed') resolve();
        };
        void jobs.listen('ended', () => void look()).then(() => look());
      });
      await jobs.enqueue('tree', key, data);
      await worker.start();
      await ended;
      expect(await jobs.state('tree', key)).toMatchObject({ state: 'completed' });
      const messages = (await store.sessions.get('local', session.id))?.messages ?? [];
      expect(messages).toHaveLength(1);
      const [answer] = messages;
      expect(answer).toMatchObject({
        id: 'msg_askergone',
        role: 'assistant',
        runId: rootRunId,
        content: expect.stringContaining('helper found: the tide'),
        metadata: { status: 'ok', rootRunId, delegationUsed: true },
      });
      // The sub-agent ran in a job of its own: its run part comes from the stored events, closed.
      const runs = (answer!.parts as Array<{ type: string; data?: { agent?: string; status?: string } }>)
        .filter((part) => part.type === 'data-run')
        .map((part) => part.data);
      expect(runs).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ agent: 'main', status: 'ok' }),
          expect.objectContaining({ agent: 'helper', status: 'ok' }),
        ]),
      );
    } finally {
      await worker.stop({ drainMs: 0 });
      await store.close();
    }
  }, 30_000);
});
