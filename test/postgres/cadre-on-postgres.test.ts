import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { jobUuid } from '../../src/store/postgres/job-queue.ts';
import { cadreInProcess, fixtureCadre } from '../helpers/cli-in-process.ts';

// `cadre` pointed at PostgreSQL by CADRE_DATABASE_URL, through its front door: what one process stores,
// the next one (another `cadre` command) reads, and nothing goes to the SQLite file. Runs where a test
// database is given (CI starts one with .ci/start-postgres).
const url = process.env.CADRE_TEST_DATABASE_URL;
const schema = `cadre_cli_${process.pid}`;

describe.skipIf(!url)('cadre with CADRE_DATABASE_URL', () => {
  afterAll(async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  });

  it('asks, lists runs and searches documents in the database, leaving no cadre.db behind', async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.end();
    const { env: base, home } = await fixtureCadre(() => ({ text: 'Tides rise twice a day.' }));
    const env = { ...base, CADRE_DATABASE_URL: `${url}?options=-c%20search_path%3D${schema}` };

    const asked = await cadreInProcess(['ask', 'when do tides rise?'], env);
    expect([asked.code, asked.stdout]).toEqual([0, 'Tides rise twice a day.\n']);
    const runs = JSON.parse((await cadreInProcess(['runs', 'list', '--json'], env)).stdout).runs;
    expect(runs).toEqual([expect.objectContaining({ task: 'when do tides rise?', status: 'ok' })]);

    const file = join(home, 'notes.md');
    writeFileSync(file, '# Moon\n\nThe moon pulls the tides; spring tides follow a full moon.');
    expect((await cadreInProcess(['docs', 'add', file], env)).code).toBe(0);
    const found = JSON.parse(
      (await cadreInProcess(['docs', 'search', 'spring tides', '--json'], env)).stdout,
    );
    expect(JSON.stringify(found)).toContain('full moon');
    expect(existsSync(join(home, 'cadre.db'))).toBe(false);
  });

  it("keeps no question in a finished job, and deletes a tree's jobs with the run, its session or a prune", async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      const { env: base } = await fixtureCadre(() => ({ text: 'Noted.' }));
      const env = { ...base, CADRE_DATABASE_URL: `${url}?options=-c%20search_path%3D${schema}` };
      const jobsHolding = async (text: string) =>
        Number(
          (
            await client.query(`SELECT count(*) AS n FROM ${schema}_jobs.job WHERE data::text LIKE $1`, [
              `%${text}%`,
            ])
          ).rows[0].n,
        );
      const treeJobs = async (rootRunId: string) =>
        Number(
          (
            await client.query(`SELECT count(*) AS n FROM ${schema}_jobs.job WHERE id = $1`, [
              jobUuid(`tree:${rootRunId}`),
            ])
          ).rows[0].n,
        );
      /** Asks `question`; the id of the tree that answered it. */
      const ask = async (question: string) => {
        expect((await cadreInProcess(['ask', question], env)).code).toBe(0);
        const runs = JSON.parse((await cadreInProcess(['runs', 'list', '--json'], env)).stdout)
          .runs as Array<{
          id: string;
          task: string;
        }>;
        return runs.find((candidate) => candidate.task === question)!.id;
      };

      const removed = await ask('RUN-SECRET-QUESTION');
      // Ended: the job's question and history are gone from the queue; the job itself stays with the run.
      expect(await jobsHolding('RUN-SECRET-QUESTION')).toBe(0);
      expect(await treeJobs(removed)).toBe(1);
      expect((await cadreInProcess(['runs', 'rm', removed], env)).code).toBe(0);
      expect(await treeJobs(removed)).toBe(0);

      const inSession = await ask('SESSION-SECRET-QUESTION');
      expect(await treeJobs(inSession)).toBe(1);
      const sessions = JSON.parse((await cadreInProcess(['sessions', 'list', '--json'], env)).stdout)
        .sessions as Array<{ id: string; title: string }>;
      const session = sessions.find((candidate) => candidate.title.includes('SESSION-SECRET-QUESTION'))!;
      expect((await cadreInProcess(['sessions', 'rm', session.id], env)).code).toBe(0);
      expect(await treeJobs(inSession)).toBe(0);

      const pruned = await ask('PRUNED-SECRET-QUESTION');
      expect(await treeJobs(pruned)).toBe(1);
      expect((await cadreInProcess(['runs', 'prune', '--older-than', '0d'], env)).code).toBe(0);
      expect(await treeJobs(pruned)).toBe(0);
    } finally {
      await client.end();
    }
  });
});
