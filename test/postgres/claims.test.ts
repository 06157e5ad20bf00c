import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { freshSchema, TEST_DATABASE_URL } from '../helpers/postgres.ts';

// The resume of one journal is claimed in the database when runs are jobs: one process at a time on any
// machine, and a claim whose process died (its connection gone) is free again.
describe.skipIf(!TEST_DATABASE_URL)('claims across processes', () => {
  it('hold one claim per key until released or until the holder is gone', async () => {
    const url = await freshSchema('claims');
    const first = await openPostgresStore(url);
    const second = await openPostgresStore(url);
    try {
      const [firstJobs, secondJobs] = [await first.jobs(), await second.jobs()];
      const held = await firstJobs.claim('resume:jrn_1');
      expect(held).toHaveProperty('release');
      // Refused with who holds it: this process (both stores are in it).
      expect(await secondJobs.claim('resume:jrn_1')).toEqual({
        heldBy: { pid: process.pid, host: hostname() },
      });
      // Another key is free.
      const other = await secondJobs.claim('resume:jrn_2');
      expect(other).toHaveProperty('release');
      await (held as { release: () => Promise<void> }).release();
      const taken = await secondJobs.claim('resume:jrn_1');
      expect(taken).toHaveProperty('release');
      // The holder's process going away (its connections closed) lets the claim go.
      await second.close();
      expect(await firstJobs.claim('resume:jrn_1')).toHaveProperty('release');
    } finally {
      await first.close();
      await second.close();
    }
  });
});
