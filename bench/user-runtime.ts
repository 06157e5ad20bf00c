/**
 * What composing a user's runtime costs per request (`Cadre.runtime()`): built again on every call (the
 * user's settings or documents changed each time: what every request paid before the runtime was kept per
 * user) against kept (one read of the user's revision). SQLite, one user with a document. Run with
 * `npx node bench/user-runtime.ts`.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cadre } from '../src/app/create-cadre.ts';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.ts';

const ROUNDS = Number(process.env.BENCH_ITERATIONS ?? 300);
const home = mkdtempSync(join(tmpdir(), 'cadre-bench-runtime-'));
const store = openSqliteStore(join(home, 'cadre.db'));
const cadre = await Cadre.create({ env: { CADRE_HOME: home }, cwd: home, store });
await cadre.documents.add('local', {
  filename: 'notes.md',
  bytes: new TextEncoder().encode('# Notes\n\nTides.'),
});

async function median(work: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 20; i++) await work();
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now();
    await work();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]! * 1000;
}

// A change to the user's settings makes the next request compose them again, as every request once did.
const rebuilt = await median(async () => {
  await store.settings.put('runtime-revision', 'local', String(Math.random()));
  await cadre.runtime({ userId: 'local' });
});
const kept = await median(() => cadre.runtime({ userId: 'local' }));
// The write that stands for the change, alone: taken out of the figure above.
const write = await median(() => store.settings.put('bench', 'local', String(Math.random())));
console.log(`Cadre.runtime() per request (SQLite, ${ROUNDS} rounds, median)`);
const composed = rebuilt - write;
console.log(
  `  composed again ${composed.toFixed(0)} us   kept ${kept.toFixed(0)} us   ratio ${(composed / kept).toFixed(1)}x   (the change's own write, ${write.toFixed(0)} us, not counted)`,
);
await cadre.close();
