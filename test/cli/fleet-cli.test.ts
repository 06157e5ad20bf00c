import { describe, expect, it } from 'vitest';
import { tempHome } from '../helpers/cli.ts';
import { cadreInProcess } from '../helpers/cli-in-process.ts';

// On the embedded store there is no queue and no worker: `cadre workers` and `cadre queue` say so plainly
// (and in their JSON), and what needs a queue is refused as the person's mistake, not a crash. The
// PostgreSQL side is test/e2e/postgres-fleet.test.ts.
describe.skipIf(process.env.CADRE_TEST_MODE === 'postgres')(
  'cadre workers and cadre queue without a queue',
  () => {
    it('say there is no queue rather than fail', async () => {
      const env = { CADRE_HOME: tempHome() };
      const workers = await cadreInProcess(['workers'], env);
      expect(workers.code).toBe(0);
      expect(workers.stdout).toMatch(
        /^No queue and no workers: this Cadre runs each question in the process/,
      );
      expect(JSON.parse((await cadreInProcess(['workers', '--json'], env)).stdout)).toEqual({ queue: false });
      const queue = await cadreInProcess(['queue'], env);
      expect(queue.code).toBe(0);
      expect(queue.stdout).toMatch(/^No queue: .*Set CADRE_DATABASE_URL/);
      expect(JSON.parse((await cadreInProcess(['queue', '--json'], env)).stdout)).toEqual({ queue: false });
      for (const sub of ['retry', 'drop']) {
        const refused = await cadreInProcess(['queue', sub, 'job_1'], env);
        expect(refused.code).toBe(2);
        expect(refused.stderr).toMatch(/There is no queue/);
      }
    });

    it('refuse what they do not know', async () => {
      const env = { CADRE_HOME: tempHome() };
      expect((await cadreInProcess(['queue', 'flush'], env)).stderr).toMatch(/unknown sub-command "flush"/);
      expect((await cadreInProcess(['queue', 'retry'], env)).stderr).toMatch(/usage: cadre queue retry ID/);
      expect((await cadreInProcess(['workers', '--silent-after', 'soon'], env)).stderr).toMatch(
        /--silent-after soon: expected a number of seconds/,
      );
    });
  },
);
