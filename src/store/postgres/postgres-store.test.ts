import pg from 'pg';
import { afterAll, describe, it } from 'vitest';
import { describeStoreContract } from '../../../test/store/store-contract.ts';
import { openPostgresStore } from './postgres-store.ts';

// The PostgreSQL half of the store contract runs where a database is given (CI starts one with
// .ci/start-postgres); each store gets a fresh schema of its own, dropped at the end.
const url = process.env.CADRE_TEST_DATABASE_URL;
const schemas: string[] = [];

async function openWithUsers() {
  const schema = `cadre_test_${process.pid}_${schemas.length}`;
  schemas.push(schema);
  const store = await openPostgresStore(url!, { schema });
  await store.database.query(
    "INSERT INTO users (id, name, created_at) VALUES ('alice', 'alice', 0), ('bob', 'bob', 0)",
  );
  return store;
}

if (url) {
  describeStoreContract('PostgreSQL', openWithUsers);
  afterAll(async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  });
} else {
  describe('store contract: PostgreSQL', () => {
    it.skip('runs when CADRE_TEST_DATABASE_URL names a database', () => {});
  });
}
