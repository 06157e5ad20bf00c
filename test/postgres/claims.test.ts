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
      const release = await firstJobs.claim('resume:jrn_1');
      expect(release).toBeTypeOf('function');
      expect(await secondJobs.claim('resume:jrn_1')).toBeUndefined();
      // Another key is free.
      const other = await secondJobs.claim('resume:jrn_2');
      expect(other).toBeTypeOf('function');
      await release!();
      const taken = await secondJobs.claim('resume:jrn_1');
      expect(taken).toBeTypeOf('function');
      // The holder's process going away (its connections closed) lets the claim go.
      await second.close();
      expect(await firstJobs.claim('resume:jrn_1')).toBeTypeOf('function');
      await other?.();
    } finally {
      await first.close();
      await second.close();
    }
  });
});
