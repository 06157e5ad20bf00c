import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runFinish, runStart, toolResult } from '../../../test/helpers/run-events.ts';
import { describeStoreContract } from '../../../test/store/store-contract.ts';
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

describe('a large tool output in SQLite', () => {
  it('is stored once when it is a string too', async () => {
    const store = withUsers(':memory:');
    const output = 'y'.repeat(20_000);
    store.runs.record(runStart('alice'));
    store.journal.create('jrn_1').put('r', 'tool-result', 'c1', { ok: true, output }, 'soon');
    store.runs.record(toolResult(1, output));
    await store.runs.flush();
    expect((store.database.prepare('SELECT count(*) AS n FROM payloads').get() as { n: number }).n).toBe(1);
    expect((await store.journal.open('jrn_1')).get('r', 'tool-result', 'c1')).toEqual({ ok: true, output });
    await store.close();
  });

  it('is stored once for its event and its journal entry, and goes with the last of them', async () => {
    const store = withUsers(':memory:');
    const output = { page: 'x'.repeat(20_000) };
    store.runs.record(runStart('alice'));
    await store.journal.begin('jrn_1', 'r1', 'alice', { agent: 'main', task: 't', history: [], inputs: {} });
    store.journal.create('jrn_1').put('r', 'tool-result', 'c1', { ok: true, output }, 'soon');
    store.runs.record(toolResult(1, output));
    store.runs.record(runFinish(2));
    await store.runs.flush();
    const count = (sql: string) => (store.database.prepare(sql).get() as { n: number }).n;
    expect(count('SELECT count(*) AS n FROM payloads')).toBe(1);
    expect(count('SELECT max(length(body)) AS n FROM journal')).toBeLessThan(100);
    expect((await store.journal.open('jrn_1')).get('r', 'tool-result', 'c1')).toEqual({ ok: true, output });
    const [stored] = (await store.runs.events('alice', 'r1')).filter(
      (row) => row.event.type === 'tool-result',
    );
    expect((stored!.event as { output: unknown }).output).toEqual(output);
    expect(await store.runs.removeTree('alice', 'r1')).toBe(true);
    expect(count('SELECT count(*) AS n FROM payloads')).toBe(0);
    await store.close();
  });
});

describe('a store being closed', () => {
  it('drops an attempt that begins after it closed instead of rejecting where nobody waits', async () => {
    const store = withUsers(join(mkdtempSync(join(tmpdir(), 'cadre-closed-')), 'cadre.db'));
    await store.close();
    await expect(
      store.journal.begin('jrn_1', 'r1', 'alice', { agent: 'main', task: 't', history: [], inputs: {} }),
    ).resolves.toBeUndefined();
  });
});
