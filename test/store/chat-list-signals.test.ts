import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { freshSchema, TEST_DATABASE_URL } from '../helpers/postgres.ts';

/**
 * A chat list open in one process is told what another process on the same store changed, with no timer
 * (the page's `GET /api/sessions/events` reads the list only then): a chat made, a tree started and ended
 * in it, an answer stored. Two stores on one database stand for the two processes.
 */
function chatListsAcrossProcesses(open: () => Promise<[Store, Store]>): void {
  it('a session written or a tree started and ended through another store wakes the watcher', async () => {
    const [writing, watching] = await open();
    const looks = new Set<() => void>();
    let looking = Promise.resolve();
    /** Resolves once `check` holds, looked at at each change the watcher is told of. */
    const told = (check: () => Promise<boolean>) =>
      new Promise<void>((resolve) => {
        const look = () => {
          looking = looking.then(async () => {
            if (looks.has(look) && (await check())) {
              looks.delete(look);
              resolve();
            }
          });
        };
        looks.add(look);
      });
    const ready = told(async () => true);
    const unwatch = watching.sessions.watchLists(() => {
      for (const look of [...looks]) look();
    });
    try {
      // Watching has begun once the watcher is first called (PostgreSQL: LISTEN is in place).
      await ready;
      const made = told(async () => (await watching.sessions.list('local')).length === 1);
      const session = await writing.sessions.create('local', { title: 'owls' });
      await made;
      const base = { rootRunId: 'r1', runId: 'r1', parentRunId: null, depth: 0, agent: 'main', time: 1 };
      const running = async () => (await watching.runs.listRuns('local', { status: 'running' })).length;
      const started = told(async () => (await running()) === 1);
      writing.runs.record({
        ...base,
        seq: 0,
        type: 'run-start',
        task: 't',
        model: 'm:x',
        userId: 'local',
        sessionId: session.id,
      });
      await started;
      const usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
      const ended = told(async () => (await running()) === 0);
      writing.runs.record({
        ...base,
        seq: 1,
        type: 'run-finish',
        status: 'ok',
        summary: 'done',
        usage,
        subtreeUsage: usage,
      });
      await ended;
      const answered = told(
        async () => (await watching.sessions.get('local', session.id))?.messages.length === 1,
      );
      await writing.sessions.append('local', session.id, { role: 'assistant', content: 'done', runId: 'r1' });
      await answered;
      expect(looks.size).toBe(0);
    } finally {
      unwatch();
      await looking;
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
