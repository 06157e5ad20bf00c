import { describeStoreContract } from '../../test/store/store-contract.ts';
import { openSqliteStore } from './sqlite-store.ts';

describeStoreContract('SQLite', async () => {
  const store = openSqliteStore(':memory:');
  store.database
    .prepare("INSERT INTO users (id, name, created_at) VALUES ('alice', 'alice', 0), ('bob', 'bob', 0)")
    .run();
  return store;
});
