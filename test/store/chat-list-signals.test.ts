import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { freshSchema, TEST_DATABASE_URL } from '../helpers/postgres.ts';
import { chatListIsTold } from './chat-list-scenario.ts';

/**
 * A chat list open in one process is told what another process on the same store changed, with no timer
 * (the page's `GET /api/sessions/events` reads the list only then): a chat made, a tree started and ended
 * in it, an answer stored. Two stores on one database stand for the two processes.
 */
function chatListsAcrossProcesses(open: () => Promise<[Store, Store]>): void {
  it('a session written or a tree started and ended through another store wakes the watcher', async () => {
    const [writing, watching] = await open();
    try {
      await chatListIsTold(writing, watching, 'local');
    } finally {
      await Promise.all([writing.close(), watching.close()]);
    }
  }, 20_000);
}

describe('chat lists on one SQLite file, told through cadre.db-lists', () => {
  chatListsAcrossProcesses(async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'lists-')), 'cadre.db');
    return [openSqliteStore(path), openSqliteStore(path)];
  });
});

describe.skipIf(!TEST_DATABASE_URL)('chat lists on one PostgreSQL database, told by NOTIFY', () => {
  chatListsAcrossProcesses(async () => {
    const url = await freshSchema('lists');
    return [await openPostgresStore(url), await openPostgresStore(url)];
  });
});
