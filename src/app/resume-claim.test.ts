import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempHome } from '../../test/helpers/cli.ts';
import { claimResume } from './resume-claim.ts';

/** Puts a lock file for `journalId` in `home` as another process would have left it. */
function lockFile(home: string, journalId: string, content: string, ageMs = 0): void {
  const dir = join(home, 'resuming');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${journalId}.lock`);
  writeFileSync(file, content);
  const at = (Date.now() - ageMs) / 1000;
  utimesSync(file, at, at);
}

describe('claiming the resume of a journal across processes', () => {
  it('is one holder at a time; released, it can be claimed again', () => {
    const home = tempHome();
    const first = claimResume(home, 'jrn_a');
    expect('release' in first).toBe(true);
    // This process's own lock counts as stale (claims within a process are checked in memory first).
    const again = claimResume(home, 'jrn_b');
    expect('release' in again).toBe(true);
    if ('release' in first) first.release();
    expect('release' in claimResume(home, 'jrn_a')).toBe(true);
  });

  it("refuses while another live process holds it, and takes over a dead process's lock", () => {
    const home = tempHome();
    lockFile(home, 'jrn_live', `${process.ppid}\n`);
    expect(claimResume(home, 'jrn_live')).toEqual({ heldBy: process.ppid });
    lockFile(home, 'jrn_dead', '999999999\n');
    expect('release' in claimResume(home, 'jrn_dead')).toBe(true);
  });

  it('waits on a lock without a pid while it may be being written, and takes it over once it is old', () => {
    const home = tempHome();
    lockFile(home, 'jrn_new', '');
    expect(claimResume(home, 'jrn_new')).toEqual({ heldBy: 0 });
    // Left by a process killed between making the file and writing its pid: not held for ever.
    lockFile(home, 'jrn_old', '', 60_000);
    expect('release' in claimResume(home, 'jrn_old')).toBe(true);
    lockFile(home, 'jrn_junk', 'not a pid', 60_000);
    expect('release' in claimResume(home, 'jrn_junk')).toBe(true);
  });
});
