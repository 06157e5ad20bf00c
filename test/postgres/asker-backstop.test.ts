import { describe, expect, it } from 'vitest';
import type { TreeJobData } from '../../src/app/jobs/job-data.ts';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { runCli, tempHome } from '../helpers/cli.ts';
import { freshSchema, recordRootStart, TEST_DATABASE_URL } from '../helpers/postgres.ts';

// The asking terminal follows a tree's stored events until the root's end. If the tree's job ends without
// that end ever being stored (a worker's bug, a write lost for good), it must not wait forever: after a
// grace it closes the root as interrupted, saying why.
describe.skipIf(!TEST_DATABASE_URL)('the asking side of a tree run as a job', () => {
  it("closes a root whose job ended without storing the root's end, rather than waiting forever", async () => {
    const url = await freshSchema('backstop');
    const env = {
      CADRE_HOME: tempHome(),
      CADRE_MODEL: 'compatible:fixture',
      CADRE_COMPATIBLE_BASE_URL: 'http://127.0.0.1:9/v1',
      CADRE_DATABASE_URL: url,
    };
    const asking = runCli(['ask', '--no-worker', '--json', 'A question'], env);
    // A worker that starts the root, then ends the job without the root's end.
    const store = await openPostgresStore(url);
    try {
      const jobs = await store.jobs();
      const lease = await jobs.enlist({ name: 'careless', standing: true });
      const place = (job: { data: unknown }) => {
        const { rootRunId } = job.data as TreeJobData;
        return { rootRunId, runId: rootRunId };
      };
      let [job] = await jobs.take(1, lease.id, place);
      for (let tries = 0; !job && tries < 200; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        [job] = await jobs.take(1, lease.id, place);
      }
      const data = job!.data as TreeJobData;
      await recordRootStart(store, {
        runId: data.rootRunId,
        userId: data.userId,
        task: 'A question',
        model: 'compatible:fixture',
      });
      const endedAt = Date.now();
      await jobs.complete(job!, { status: 'ok' });
      const asked = await asking;
      expect(Date.now() - endedAt).toBeLessThan(15_000);
      const result = JSON.parse(asked.stdout) as { run: { status: string; error?: string } };
      // Interrupted, so `cadre runs resume` can go on from its journal.
      expect(result.run.status).toBe('interrupted');
      expect(result.run.error).toBe(
        "Interrupted: its worker ended the tree's job without storing the run's end.",
      );
      await lease.release();
    } finally {
      await store.close();
    }
  }, 30_000);
});
