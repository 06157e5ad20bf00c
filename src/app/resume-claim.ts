import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { processAlive } from '../store/run-owner.ts';

/**
 * Claims the resume of one journal across the processes of this machine, with a lock file in
 * `$CADRE_HOME/resuming/`: two `cadre runs resume` (or a terminal and `cadre serve`) started at once both
 * found the tree interrupted, since a new attempt reaches the table only with its writer's next slice, and
 * both ran it again, each spending the model calls. The claim is held until the attempt has ended and is
 * stored. A lock whose process is gone (killed mid-resume) is stale and taken over; one naming this
 * process is too (a container's pid 1 again), since claims within a process are kept in memory first.
 * Best effort: when the folder cannot be written, the resume goes on without it.
 */
export function claimResume(home: string, journalId: string): { release: () => void } | { heldBy: number } {
  const dir = join(home, 'resuming');
  const file = join(dir, `${journalId.replace(/[^\w-]/g, '_')}.lock`);
  try {
    mkdirSync(dir, { recursive: true });
  } catch {
    return { release: () => {} };
  }
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return { release: () => rmSync(file, { force: true }) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return { release: () => {} };
    }
    const holder = lockHolder(file);
    if (holder === 0) {
      // No pid in it: its process is writing it right now, or died between making it and writing it.
      if (!olderThan(file, UNREADABLE_LOCK_STALE_MS)) return { heldBy: 0 };
    } else if (holder !== undefined && holder !== process.pid && processAlive(holder))
      return { heldBy: holder };
    // Removed by its holder meanwhile (undefined), or stale: taken over on the next try.
    if (holder !== undefined) rmSync(file, { force: true });
  }
  return { heldBy: 0 };
}

/** A lock file without a pid older than this was left by a process killed as it made it. */
const UNREADABLE_LOCK_STALE_MS = 10_000;

function olderThan(file: string, ms: number): boolean {
  try {
    return Date.now() - statSync(file).mtimeMs > ms;
  } catch {
    return true;
  }
}

/** The pid a lock file names: 0 when it names none (empty, or not a pid), undefined when it is gone. */
function lockHolder(file: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(file, 'utf8'), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : 0;
  } catch {
    return undefined;
  }
}
