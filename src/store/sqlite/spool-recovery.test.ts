import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { CadreEvent } from '../../core/events.ts';
import { currentBoot } from '../run-owner.ts';
import { openDatabase } from './database.ts';
import { recoverDeadSpools } from './run-maintenance.ts';
import { readSpool, spoolDirFor, spoolLine } from './spool.ts';
import { openSqliteStore } from './sqlite-store.ts';

const STORE_MODULE = fileURLToPath(new URL('./sqlite-store.ts', import.meta.url));

const base = { rootRunId: 'r1', runId: 'r1', parentRunId: null, depth: 0, agent: 'main', time: 1 };
const start = { ...base, seq: 0, type: 'run-start', task: 't', model: 'm:x', userId: 'ann' } as const;

/** Opens the store in a child process (which applies dead spools on open) and closes it. */
function openInChild(path: string): Promise<{ code: number | null; stderr: string }> {
  const script = `const { openSqliteStore } = await import(${JSON.stringify(STORE_MODULE)});
const store = openSqliteStore(${JSON.stringify(path)});
await store.close();`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script]);
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stderr })));
}

describe('recovering a dead process spool', () => {
  it('stores it once when several processes open the store at the same moment (serve and ask)', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'spool-recovery-')), 'cadre.db');
    openDatabase(path).close();
    const events: CadreEvent[] = [start];
    for (let seq = 1; seq <= 3_000; seq++)
      events.push({ ...base, seq, type: 'text-delta', delta: `word ${seq} ` });
    let text = events.map((event) =>
      spoolLine({ kind: 'event', payloadHash: null, body: JSON.stringify(event) }),
    );
    const journal = Array.from({ length: 200 }, (_, index) =>
      spoolLine({
        kind: 'journal',
        journalId: 'j',
        runKey: 'r',
        entryKind: 'model-step',
        key: `${index}`,
        body: '{}',
      }),
    );
    text = [...text.slice(0, 1_500), ...journal, ...text.slice(1_500)];
    mkdirSync(spoolDirFor(path), { recursive: true });
    // pid 999999 (dead) on this host: the spool of a `cadre ask` killed before its slices caught up.
    writeFileSync(
      join(spoolDirFor(path), `${encodeURIComponent(hostname())}~999999~old.spool`),
      text.join(''),
    );

    const results = await Promise.all([openInChild(path), openInChild(path), openInChild(path)]);
    expect(results).toEqual(Array(3).fill({ code: 0, stderr: '' }));

    expect(readdirSync(spoolDirFor(path))).toEqual([]);
    const store = openSqliteStore(path);
    const stored = await store.runs.events('ann', 'r1');
    expect(stored).toHaveLength(3_001);
    expect(stored.every((row, index) => row.cursor === index + 1 && row.event.seq === index)).toBe(true);
    const positions = store.database
      .prepare("SELECT position, key FROM journal WHERE journal_id = 'j' ORDER BY position")
      .all() as Array<{ position: number; key: string }>;
    expect(positions.map((row) => [row.position, row.key])).toEqual(
      Array.from({ length: 200 }, (_, index) => [index + 1, `${index}`]),
    );
    await store.close();
  });

  it('applies dead spools oldest first, whatever their process ids, and removes a rewrite cut short', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'spool-recovery-')), 'cadre.db');
    mkdirSync(spoolDirFor(path), { recursive: true });
    const host = encodeURIComponent(hostname());
    const entry = (key: string) =>
      spoolLine({ kind: 'journal', journalId: 'j', runKey: 'r', entryKind: 'model-step', key, body: '{}' });
    // The first attempt (pid 900000) died; so did its resume (pid 100000), an hour later.
    const earlier = (Date.now() - 3_600_000).toString(36);
    const later = Date.now().toString(36);
    writeFileSync(join(spoolDirFor(path), `${host}~900000~${earlier}aaaaaa.spool`), entry('first'));
    writeFileSync(join(spoolDirFor(path), `${host}~100000~${later}bbbbbb.spool`), entry('second'));
    writeFileSync(join(spoolDirFor(path), `${host}~100000~${later}bbbbbb.spool.next`), entry('second'));
    const store = openSqliteStore(path);
    const rows = store.database
      .prepare("SELECT key FROM journal WHERE journal_id = 'j' ORDER BY position")
      .all() as Array<{ key: string }>;
    expect(rows.map((row) => row.key)).toEqual(['first', 'second']);
    expect(readdirSync(spoolDirFor(path))).toEqual([]);
    await store.close();
  });

  it.skipIf(!existsSync('/proc/sys/kernel/random/boot_id'))(
    'applies a spool from before a reboot even when its process id is taken by a live process now',
    async () => {
      const path = join(mkdtempSync(join(tmpdir(), 'spool-recovery-')), 'cadre.db');
      const store = openSqliteStore(path);
      mkdirSync(spoolDirFor(path), { recursive: true });
      const host = encodeURIComponent(hostname());
      const line = spoolLine({ kind: 'event', payloadHash: null, body: JSON.stringify(start) });
      // The process id 4242 belongs to a live process now; one spool is from this boot, one from before.
      const thisBoot = `${host}~4242~${Date.now().toString(36)}aaaaaa~${currentBoot()}.spool`;
      writeFileSync(join(spoolDirFor(path), thisBoot), line);
      writeFileSync(
        join(spoolDirFor(path), `${host}~4242~${Date.now().toString(36)}bbbbbb~0123abcd.spool`),
        line,
      );
      expect(recoverDeadSpools(store.database, { isAlive: () => true })).toBe(1);
      expect(readdirSync(spoolDirFor(path))).toEqual([thisBoot]);
      expect((await store.runs.events('ann', 'r1')).map((row) => row.event.type)).toEqual(['run-start']);
      await store.close();
    },
  );

  it('closes the runs of an earlier process that had this process id (a restarted container), not its own', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'spool-recovery-')), 'cadre.db');
    mkdirSync(spoolDirFor(path), { recursive: true });
    // `cadre serve` as process 1 of a container crashed mid-run; the restarted one is process 1 again.
    const line = spoolLine({ kind: 'event', payloadHash: null, body: JSON.stringify(start) });
    const name = `${encodeURIComponent(hostname())}~${process.pid}~${Date.now().toString(36)}aaaaaa.spool`;
    writeFileSync(join(spoolDirFor(path), name), line);
    const store = openSqliteStore(path);
    // A run this process is running, recorded with the same process id.
    store.runs.record({ ...start, runId: 'r2', rootRunId: 'r2' });
    await store.runs.flush();
    expect(await store.runs.markInterrupted()).toEqual(['r1']);
    expect((await store.runs.getRunTree('ann', 'r1'))?.status).toBe('interrupted');
    expect((await store.runs.getRunTree('ann', 'r2'))?.status).toBe('running');
    await store.close();
  });

  it('keeps only the records it could not apply, so trying again at every start stays short', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'spool-recovery-')), 'cadre.db');
    const store = openSqliteStore(path);
    mkdirSync(spoolDirFor(path), { recursive: true });
    // A run start without its task (a bug, a damaged file) cannot become a runs row.
    const bad = { ...start, runId: 'r2', rootRunId: 'r2', task: undefined };
    const events = [start, bad, ...Array.from({ length: 100 }, (_, index) => ({ ...start, seq: index + 1 }))];
    const file = join(
      spoolDirFor(path),
      `${encodeURIComponent(hostname())}~999999~${Date.now().toString(36)}aaaaaa.spool`,
    );
    writeFileSync(
      file,
      events
        .map((event) => spoolLine({ kind: 'event', payloadHash: null, body: JSON.stringify(event) }))
        .join(''),
    );
    expect(recoverDeadSpools(store.database, { isAlive: () => false })).toBe(0);
    expect(await store.runs.events('ann', 'r1')).toHaveLength(101);
    expect(readSpool(file).map((record) => record.kind === 'event' && JSON.parse(record.body).runId)).toEqual(
      ['r2'],
    );
    await store.close();
  });
});
