import { spawn, spawnSync } from 'node:child_process';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { sessionName } from '../../src/store/postgres/database.ts';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { localKey } from '../../src/store/run-owner.ts';
import { freshSchema, TEST_DATABASE_URL } from '../helpers/postgres.ts';

// A cadre process killed with SIGKILL leaves its database sessions behind for a moment: the lease it held
// still looks held, and a statement it sent last may still commit after the next process has looked. The
// sweep ends the sessions of this machine's dead cadre processes first. Sessions here are named as a
// cadre process names its own (`cadre <pid> <local key>`).

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function session(name: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, application_name: name });
  client.on('error', () => {});
  await client.connect();
  cleanups.push(() => client.end().catch(() => {}));
  return client;
}

const answers = (client: pg.Client) =>
  client.query('SELECT 1').then(
    () => true,
    () => false,
  );

describe.skipIf(!TEST_DATABASE_URL || !localKey())('the sessions of dead cadre processes', () => {
  it("are ended, letting go of what they held; live processes' and other machines' are left alone", async () => {
    const deadPid = spawnSync(process.execPath, ['-e', '']).pid!;
    const live = spawn('sleep', ['30']);
    cleanups.push(() => live.kill());
    // The dead process's session takes its lock before it bears the dead process's name, in one round
    // trip: any cadre process on this machine sweeps (tests running beside this one too), and a sweep
    // between the two would end it before it held anything.
    const dead = await session('about to be a dead cadre');
    await dead.query(
      `SELECT pg_advisory_lock(hashtext('dead-sessions-test'), 1); SET application_name = 'cadre ${deadPid} ${localKey()}'`,
    );
    const alive = await session(`cadre ${live.pid} ${localKey()}`);
    const elsewhere = await session(`cadre ${deadPid} 0123456789abcdef`);
    const other = await session(`psql`);

    // The sweep any cadre process makes (at its start, and every few seconds in a worker).
    const store = await openPostgresStore(await freshSchema('dead_sessions'));
    cleanups.push(() => store.close());
    await store.runs.markInterrupted();

    expect(await answers(dead)).toBe(false);
    // Ended before the sweep returned: what it held is free now, not in a moment.
    const { rows } = await other.query(
      "SELECT pg_try_advisory_lock(hashtext('dead-sessions-test'), 1) AS free",
    );
    expect(rows[0].free).toBe(true);
    expect(await answers(alive)).toBe(true);
    expect(await answers(elsewhere)).toBe(true);
    expect(await answers(other)).toBe(true);
    // The store's own sessions carry this process's name, as a killed process's would have carried its.
    expect(sessionName()).toBe(`cadre ${process.pid} ${localKey()}`);
    const named = await other.query(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
      [sessionName()],
    );
    expect(named.rows[0].n).toBeGreaterThan(0);
  });
});
