import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeStoreContract } from '../../test/store/store-contract.ts';
import { openSqliteStore } from './sqlite-store.ts';

function withUsers(location: string) {
  const store = openSqliteStore(location);
  store.database
    .prepare("INSERT INTO users (id, name, created_at) VALUES ('alice', 'alice', 0), ('bob', 'bob', 0)")
    .run();
  return store;
}

describeStoreContract('SQLite', async () => withUsers(':memory:'));
// A file store secures what must survive a kill in its spool first, and puts it in the tables later.
describeStoreContract('SQLite file', async () =>
  withUsers(join(mkdtempSync(join(tmpdir(), 'cadre-contract-')), 'cadre.db')),
);
