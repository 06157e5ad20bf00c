import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { onFileChange } from './file-changes.ts';

/** Resolves once `listener` was called, or rejects after 5 s (the operating system did not report it). */
function called(): { listener: () => void; once: Promise<void> } {
  let resolve: () => void = () => {};
  const once = new Promise<void>((done, fail) => {
    resolve = done;
    setTimeout(() => fail(new Error('no change reported')), 5_000).unref();
  });
  return { listener: () => resolve(), once };
}

describe('file changes', () => {
  it('reports a write to a watched file, also one that did not exist yet, and only to its own listeners', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'file-changes-'));
    const wal = called();
    let stops = 0;
    const unwatchWal = onFileChange(join(folder, 'cadre.db-wal'), wal.listener);
    const unwatchStops = onFileChange(join(folder, 'cadre.db-stops'), () => stops++);
    writeFileSync(join(folder, 'cadre.db-wal'), 'page');
    await wal.once;
    expect(stops).toBe(0);
    unwatchWal();
    unwatchWal(); // twice is harmless
    const stop = called();
    const unwatchAgain = onFileChange(join(folder, 'cadre.db-stops'), stop.listener);
    appendFileSync(join(folder, 'cadre.db-stops'), 'stop');
    await stop.once;
    expect(stops).toBeGreaterThan(0);
    unwatchStops();
    unwatchAgain();
  });
});
