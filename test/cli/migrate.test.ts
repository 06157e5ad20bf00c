import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { runCli, tempHome } from '../helpers/cli.ts';
import { freshSchema, TEST_DATABASE_URL } from '../helpers/postgres.ts';

describe('cadre migrate', () => {
  // The embedded case (runs as jobs on PostgreSQL would put this home's database there: the case below).
  it.skipIf(process.env.CADRE_TEST_MODE === 'postgres')(
    'applies what a fresh database lacks, says so, is a no-op after, and refuses a newer database',
    async () => {
      const env = { CADRE_HOME: tempHome() };
      const first = await runCli(['migrate'], env);
      expect(first.code).toBe(0);
      expect(first.stdout).toMatch(
        /^Applied \d+ migration\(s\) to the SQLite database: 001-users-sessions-runs-events, /,
      );
      const again = await runCli(['migrate', '--json'], env);
      const state = JSON.parse(again.stdout) as { database: string; applied: string[]; current: number };
      expect(state).toMatchObject({ database: 'SQLite', applied: [], unknown: [] });
      expect(state.current).toBeGreaterThan(10);
      const db = new DatabaseSync(join(env.CADRE_HOME, 'cadre.db'));
      db.exec("INSERT INTO migrations (id, applied_at) VALUES ('999-from-a-newer-cadre', 0)");
      db.close();
      const newer = await runCli(['migrate'], env);
      expect(newer.code).toBe(1);
      expect(newer.stderr).toMatch(/migrated by a newer Cadre \(999-from-a-newer-cadre\)/);
      expect((await runCli(['migrate', 'now'], env)).stderr).toMatch(/takes no words/);
    },
  );

  it.skipIf(!TEST_DATABASE_URL)('brings a PostgreSQL database up to this version', async () => {
    const env = { CADRE_HOME: tempHome(), CADRE_DATABASE_URL: await freshSchema('migrate_cli') };
    const result = JSON.parse((await runCli(['migrate', '--json'], env)).stdout) as {
      database: string;
      applied: string[];
      current: number;
    };
    expect(result.database).toBe('PostgreSQL');
    expect(result.applied.length).toBe(result.current);
    expect(JSON.parse((await runCli(['migrate', '--json'], env)).stdout).applied).toEqual([]);
  });
});
