import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe } from 'vitest';
import { InProcessTrees } from '../../src/app/in-process-trees.ts';
import { LiveRuns } from '../../src/app/live-runs.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { treeExecutorContract } from './tree-executor-contract.ts';

// Trees run in this process, on SQLite: the executor contract (its queued twin: test/postgres/queued-trees.test.ts).
describe('InProcessTrees on SQLite holds the executor contract', () => {
  treeExecutorContract(async () => {
    const home = mkdtempSync(join(tmpdir(), 'cadre-executor-'));
    const store = openSqliteStore(join(home, 'cadre.db'));
    const live = new LiveRuns();
    return {
      executor: new InProcessTrees({ store, live, home }),
      store,
      live,
      close: () => store.close(),
    };
  });
});
