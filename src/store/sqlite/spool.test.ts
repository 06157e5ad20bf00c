import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runStart, textDelta, toolResult } from '../../../test/helpers/run-events.ts';
import type { CadreEvent } from '../../core/events.ts';
import { openDatabase } from './database.ts';
import { recoverDeadSpools } from './run-maintenance.ts';
import { readSpool, readSpoolText, spoolDirFor, spoolLine } from './spool.ts';
import { openSqliteStore } from './sqlite-store.ts';

const STORE_MODULE = fileURLToPath(new URL('./sqlite-store.ts', import.meta.url));

const start = runStart('ann');
const delta = textDelta;
const result = toolResult;

function dataPath(): string {
  return join(mkdtempSync(join(tmpdir(), 'spool-')), 'cadre.db');
}

/**
 * Records `events` and journal entries in a child process that then kills itself with SIGKILL before
 * anything is written to the table (the writer's slice waits a minute).
 */
function recordAndDie(path: string, events: CadreEvent[], journal: Array<[string, string, string, unknown]>) {
  const script = `const { openSqliteStore } = await import(${JSON.stringify(STORE_MODULE)});
const store = openSqliteStore(${JSON.stringify(path)}, { events: { delayMs: 60_000 } });
await store.journal.begin('jrn_1', 'r1', 'ann', { agent: 'main', task: 't', history: [], inputs: {} });
const journal = await store.journal.open('jrn_1');
for (const event of ${JSON.stringify(events)}) store.runs.record(event);
for (const [runKey, kind, key, body] of ${JSON.stringify(journal)}) journal.put(runKey, kind, key, body);
process.kill(process.pid, 'SIGKILL');`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(child.stderr).toBe('');
  expect(child.signal).toBe('SIGKILL');
}

describe('the spool', () => {
  it('keeps what a killed process secured, and the next store applies it once, in order', async () => {
    const path = dataPath();
    const big = { page: 'x'.repeat(5_000) };
    recordAndDie(
      path,
      [start, delta(1), delta(2), result(3, big), delta(4)],
      [['r', 'model-step', '0', { parts: ['a'] }]],
    );
    // Nothing reached the table; the spool holds the attempt, every event (the journal entry secured the
    // text after the result too) and the journal entry.
    const raw = openDatabase(path);
    expect((raw.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n).toBe(0);
    raw.close();
    const [file] = readdirSync(spoolDirFor(path));
    const records = readSpool(join(spoolDirFor(path), file!));
    // The large output travels inline; it is stored once, by hash, when it reaches the table.
    expect(records.map((record) => record.kind)).toEqual([
      'attempt',
      'event',
      'event',
      'event',
      'event',
      'event',
      'journal',
    ]);

    const store = openSqliteStore(path);
    expect(readdirSync(spoolDirFor(path))).toEqual([]);
    const events = await store.runs.events('ann', 'r1');
    expect(events.map((stored) => [stored.cursor, stored.event.type])).toEqual([
      [1, 'run-start'],
      [2, 'text-delta'],
      [3, 'text-delta'],
      [4, 'tool-result'],
      [5, 'text-delta'],
    ]);
    expect((events[3]!.event as { output: unknown }).output).toEqual(big);
    expect((await store.journal.open('jrn_1')).get('r', 'model-step', '0')).toEqual({ parts: ['a'] });
    // The attempt was secured with the run's start, so `cadre runs resume r1` finds its journal.
    expect(await store.journal.find('ann', 'r1')).toMatchObject({ journalId: 'jrn_1', attempts: ['r1'] });
    // The run still belongs to the dead process, so the sweep closes it.
    expect(await store.runs.markInterrupted()).toEqual(['r1']);
    expect((await store.runs.getRunTree('ann', 'r1'))?.status).toBe('interrupted');
    await store.close();
  });

  it("stores a killed process's large tool output once for its event and its journal entry", async () => {
    const path = dataPath();
    const big = { page: 'x'.repeat(5_000) };
    recordAndDie(path, [start, result(1, big)], [['r', 'tool-result', 'c1', { ok: true, output: big }]]);
    const store = openSqliteStore(path);
    const count = (sql: string) => (store.database.prepare(sql).get() as { n: number }).n;
    expect(count('SELECT count(*) AS n FROM payloads')).toBe(1);
    expect(count('SELECT max(length(body)) AS n FROM journal')).toBeLessThan(100);
    expect((await store.journal.open('jrn_1')).get('r', 'tool-result', 'c1')).toEqual({
      ok: true,
      output: big,
    });
    await store.close();
  });

  it('applies a spool idempotently: rows already in the table are skipped and cursors stay gap-free', async () => {
    const path = dataPath();
    const store = openSqliteStore(path);
    for (const event of [start, delta(1), result(2, 1)]) store.runs.record(event);
    await store.runs.flush();
    // A process killed after its commit but before emptying its spool left all of it, plus one more.
    const dir = spoolDirFor(path);
    const body = (event: CadreEvent) =>
      spoolLine({ kind: 'event', payloadHash: null, body: JSON.stringify(event) });
    const lines = [start, delta(1), result(2, 1), delta(3)].map(body).join('');
    // A kill mid-write leaves a torn last line, which is ignored.
    writeFileSync(
      join(dir, `${encodeURIComponent(hostname())}~999999~abc.spool`),
      `${lines}E\t\t{"runId":"r1","se`,
    );
    expect(recoverDeadSpools(store.database, { isAlive: () => false })).toBe(1);
    const events = await store.runs.events('ann', 'r1');
    expect(events.map((stored) => [stored.cursor, stored.event.seq])).toEqual([
      [1, 0],
      [2, 1],
      [3, 2],
      [4, 3],
    ]);
    await store.close();
  });

  it('leaves a live process alone and empties its own spool once the table has caught up', async () => {
    const path = dataPath();
    const store = openSqliteStore(path, { events: { delayMs: 60_000 } });
    store.runs.record(start);
    store.runs.record(result(1, 'done'));
    // The barrier before the next model request.
    store.runs.secure();
    const [file] = readdirSync(spoolDirFor(path));
    const spool = join(spoolDirFor(path), file!);
    expect(statSync(spool).size).toBeGreaterThan(0);
    // Another store in this process, or another live process, does not take it.
    const other = openSqliteStore(path);
    expect(recoverDeadSpools(other.database)).toBe(0);
    await other.close();
    expect(existsSync(spool)).toBe(true);
    await store.runs.flush();
    expect(readFileSync(spool, 'utf8')).toBe('');
    await store.close();
    expect(existsSync(spool)).toBe(false);
  });

  it('is applied by a store that was already open (cadre serve) before it resumes from the journal', async () => {
    const path = dataPath();
    const serve = openSqliteStore(path);
    // A \`cadre ask\` sharing the folder dies after serve opened it, with its last step only in its spool.
    recordAndDie(path, [start, result(1, 'fetched')], [['r', 'model-step', '0', { parts: ['a'] }]]);
    const found = await serve.journal.find('ann', 'r1');
    expect(found?.journalId).toBe('jrn_1');
    const tree = await serve.runs.getRunTree('ann', 'r1');
    expect(tree?.status).toBe('running');
    expect((await serve.journal.open('jrn_1')).get('r', 'model-step', '0')).toEqual({ parts: ['a'] });
    expect(readdirSync(spoolDirFor(path))).toEqual([]);
    await serve.close();
  });

  it('is applied by a store that was already open before it removes a tree, which then stays removed', async () => {
    const path = dataPath();
    const serve = openSqliteStore(path);
    recordAndDie(path, [start, result(1, 'fetched')], [['r', 'model-step', '0', { parts: ['a'] }]]);
    expect(await serve.runs.removeTree('ann', 'r1')).toBe(true);
    // Nothing of it comes back when something later applies spools (a resume looking for its journal).
    expect(await serve.journal.find('ann', 'r1')).toBeUndefined();
    expect(await serve.runs.getRunTree('ann', 'r1')).toBeUndefined();
    expect((await serve.journal.open('jrn_1')).entries()).toBe(0);
    await serve.close();
  });
});

describe('journal entries in the spool', () => {
  it('are secured before put returns, or with `soon` by the barrier before the next model request', async () => {
    const path = dataPath();
    const store = openSqliteStore(path, { events: { delayMs: 60_000 } });
    const journal = await store.journal.open('jrn_soon');
    const spooled = () => {
      const files = existsSync(spoolDirFor(path)) ? readdirSync(spoolDirFor(path)) : [];
      return files
        .flatMap((file) => readSpool(join(spoolDirFor(path), file)))
        .filter((record) => record.kind === 'journal');
    };
    journal.put('r', 'tool-result', 'c1', { ok: true, output: 1 }, 'soon');
    expect(spooled()).toHaveLength(0);
    store.runs.secure();
    expect(spooled()).toHaveLength(1);
    journal.put('r', 'model-step', '1', { parts: [] });
    expect(spooled()).toHaveLength(2);
    await store.close();
  });
});

/** Leaves `text` in a new database's spool folder as a dead process's spool; the store opened on it applies it. */
function openWithDeadSpool(text: string) {
  const path = dataPath();
  mkdirSync(spoolDirFor(path), { recursive: true });
  writeFileSync(join(spoolDirFor(path), `${encodeURIComponent(hostname())}~999999~abc.spool`), text);
  const store = openSqliteStore(path);
  recoverDeadSpools(store.database, { isAlive: () => false });
  return store;
}

describe('a large tool output in the spool', () => {
  const big = { page: 'x'.repeat(5_000) };

  it('is written once when its journal entry and tool-result event go in one append, and both come back', async () => {
    const path = dataPath();
    const store = openSqliteStore(path, { events: { delayMs: 60_000 } });
    const journal = store.journal.create('jrn_1');
    store.runs.record(start);
    // The runtime's order: the result is committed to the journal, then its event is emitted.
    journal.put('r', 'tool-result', 'c1', { ok: true, output: big }, 'soon');
    store.runs.record(result(1, big));
    store.runs.secure();
    // Secured on its own before its event: written whole.
    journal.put('r', 'tool-result', 'c2', { ok: true, output: big }, 'now');
    store.runs.record(result(2, big));
    store.runs.secure();
    // The same value, but a different object than the event's: written whole too.
    journal.put('r', 'tool-result', 'c3', { ok: true, output: { ...big } }, 'soon');
    store.runs.record(result(3, big));
    store.runs.secure();
    const [file] = readdirSync(spoolDirFor(path));
    const text = readFileSync(join(spoolDirFor(path), file!), 'utf8');
    expect(readSpoolText(text).map((record) => record.kind)).toEqual([
      'event',
      'journal-ref',
      'event',
      'journal',
      'event',
      'journal',
      'event',
    ]);
    expect(text.split(big.page).length - 1).toBe(5);
    await store.close();

    const recovered = openWithDeadSpool(text);
    const entries = await recovered.journal.open('jrn_1');
    for (const key of ['c1', 'c2', 'c3'])
      expect(entries.get('r', 'tool-result', key)).toEqual({ ok: true, output: big });
    const order = recovered.database.prepare('SELECT key FROM journal ORDER BY position').all();
    expect(order.map((row) => row.key)).toEqual(['c1', 'c2', 'c3']);
    const events = await recovered.runs.events('ann', 'r1');
    expect(events.map((row) => row.event.type)).toEqual([
      'run-start',
      'tool-result',
      'tool-result',
      'tool-result',
    ]);
    // Stored once for the three events and the three entries, as the live process stores it.
    const count = (sql: string) => (recovered.database.prepare(sql).get() as { n: number }).n;
    expect(count('SELECT count(*) AS n FROM payloads')).toBe(1);
    await recovered.close();
  });

  it('comes back whether the entry or the event comes first, and an entry without its event is dropped', async () => {
    const event = (seq: number) =>
      spoolLine({ kind: 'event', payloadHash: null, body: JSON.stringify(result(seq, big)) });
    const ref = (key: string) =>
      spoolLine({
        kind: 'journal-ref',
        journalId: 'jrn_1',
        runKey: 'r',
        entryKind: 'tool-result',
        key,
        runId: 'r1',
      });
    const step = spoolLine({
      kind: 'journal',
      journalId: 'jrn_1',
      runKey: 'r',
      entryKind: 'model-step',
      key: '0',
      body: '{"parts":[]}',
    });
    const startLine = spoolLine({ kind: 'event', payloadHash: null, body: JSON.stringify(start) });
    // c1's event before its entry; c2's after; c9's event was torn off by a kill mid-append.
    const store = openWithDeadSpool(
      `${startLine}${event(1)}${ref('c1')}${step}${ref('c2')}${event(2)}${ref('c9')}E\t\t{"runId":"r1","se`,
    );
    const order = store.database.prepare('SELECT kind, key FROM journal ORDER BY position').all();
    expect(order.map((row) => `${row.kind} ${row.key}`)).toEqual([
      'tool-result c1',
      'model-step 0',
      'tool-result c2',
    ]);
    const entries = await store.journal.open('jrn_1');
    expect(entries.get('r', 'tool-result', 'c2')).toEqual({ ok: true, output: big });
    expect(entries.get('r', 'tool-result', 'c9')).toBeUndefined();
    await store.close();
  });
});

describe('large tool outputs of two runs with the same call id', () => {
  it('keeps both journal entries when both are secured before either event', async () => {
    // Call ids are only unique within a run (the journal keys entries by run): two sub-agents whose
    // provider numbers its calls can both make `call_0`, and the same tool with the same input gives the same text.
    const page = 'y'.repeat(5_000);
    const path = dataPath();
    const store = openSqliteStore(path, { events: { delayMs: 60_000 } });
    const journal = store.journal.create('jrn_1');
    store.runs.record(start);
    const child = (runId: string, seq: number) =>
      ({ ...result(seq, page), runId, parentRunId: 'r1', depth: 1, toolCallId: 'call_0' }) as CadreEvent;
    // Sibling children finishing in one turn: both results are committed, then both events emitted.
    journal.put('r/a', 'tool-result', 'call_0', { ok: true, output: page }, 'soon');
    journal.put('r/b', 'tool-result', 'call_0', { ok: true, output: page }, 'soon');
    store.runs.record(child('r2', 1));
    store.runs.record(child('r3', 1));
    store.runs.secure();
    const [file] = readdirSync(spoolDirFor(path));
    const text = readFileSync(join(spoolDirFor(path), file!), 'utf8');
    await store.close();

    const recovered = openWithDeadSpool(text);
    const entries = await recovered.journal.open('jrn_1');
    expect(entries.get('r/a', 'tool-result', 'call_0')).toEqual({ ok: true, output: page });
    expect(entries.get('r/b', 'tool-result', 'call_0')).toEqual({ ok: true, output: page });
    await recovered.close();
  });
});

describe('with batched durability', () => {
  it('secures journal entries and attempts in the spool, never the events queued before them', async () => {
    const path = dataPath();
    const store = openSqliteStore(path, { events: { delayMs: 60_000, durability: 'batched' } });
    store.runs.record(start);
    await store.journal.begin('jrn_1', 'r1', 'ann', { agent: 'main', task: 't', history: [], inputs: {} });
    store.runs.record(delta(1));
    store.journal.create('jrn_1').put('r', 'model-step', '0', { parts: ['a'] });
    const [file] = readdirSync(spoolDirFor(path));
    expect(readSpool(join(spoolDirFor(path), file!)).map((record) => record.kind)).toEqual([
      'attempt',
      'journal',
    ]);
    // The events still reach the table, in the writer's slices.
    await store.runs.flush();
    expect((await store.runs.events('ann', 'r1')).map((row) => row.event.type)).toEqual([
      'run-start',
      'text-delta',
    ]);
    await store.close();
  });
});
