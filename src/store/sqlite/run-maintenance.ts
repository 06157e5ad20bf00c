import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { interruptedMessage } from '../interruption-events.ts';
import { currentOwner, processAlive, type RunOwner, runsStartedHere } from '../run-owner.ts';
import { interruptionsOf } from '../sql/run-trees.ts';
import type { Database } from './database.ts';
import { EventWriter } from './event-writer.ts';
import { deadSpools, readSpool, spoolDirFor } from './spool.ts';
import { SqliteSqlDatabase } from './sql-port.ts';
import { pendingLines } from './writer-spool.ts';

/**
 * Housekeeping of stored runs that only SQLite has: runs whose process died (on this machine) are closed
 * as `interrupted`, after what dead processes left in their spools is applied. Removing trees is shared
 * (sql/run-trees.ts).
 */

export interface InterruptedSweep {
  /**
   * This process: the runs it started are alive by definition (others recorded with its id are an earlier
   * process's), and only runs of this host can be checked.
   */
  owner?: RunOwner;
  isAlive?: (pid: number) => boolean;
  now?: () => number;
}

/**
 * Marks `interrupted` every run still recorded as running whose owning process on this machine is gone
 * (killed with SIGKILL, its terminal closed, the machine rebooted). Each gets a `run-finish` event, so the
 * rebuilt tree says so too, with the usage its finished steps recorded. Returns the ids marked.
 */
export async function markInterruptedRuns(db: Database, options: InterruptedSweep = {}): Promise<string[]> {
  const owner = options.owner ?? currentOwner();
  const isAlive = options.isAlive ?? processAlive;
  // What a dead process secured but never put in the table comes first: its runs, events and journal.
  recoverDeadSpools(db, { owner, isAlive });
  const sql = new SqliteSqlDatabase(db);
  const running = await sql.all<{ id: string; root_id: string; depth: number; owner_pid: number }>(
    "SELECT id, root_id, depth, owner_pid FROM runs WHERE status = 'running' AND owner_host = ?",
    [owner.host],
  );
  // A run recorded with this process's id is an earlier process's (ids are reused) unless started here.
  const dead = running.filter((run) =>
    run.owner_pid === owner.pid ? !runsStartedHere.has(run.id) : !isAlive(run.owner_pid),
  );
  if (!dead.length) return [];
  const { events, marked } = await interruptionsOf(
    sql,
    dead,
    (run) => interruptedMessage(run.owner_pid, owner.host),
    options.now?.() ?? Date.now(),
  );
  const writer = new EventWriter(db, { owner });
  for (const event of events) writer.enqueue(event);
  await writer.close();
  return marked;
}

/**
 * Applies the spools (see spool.ts) that processes of this machine left when they died, then removes
 * them. Idempotent: a record already in the table is skipped, so two processes recovering the same file
 * at once, or a process killed between a commit and emptying its spool, store nothing twice. A spool
 * that cannot be applied now (the database busy beyond its wait) stays for the next start, with only what
 * the table still lacks. Returns how many files were applied.
 */
export function recoverDeadSpools(
  db: Database,
  options: { owner?: RunOwner; isAlive?: (pid: number) => boolean } = {},
): number {
  const location = db.location();
  if (!location) return 0;
  const owner = options.owner ?? currentOwner();
  let applied = 0;
  const dir = spoolDirFor(location);
  for (const { path, owner: writer } of deadSpools(dir, owner, options.isAlive ?? processAlive)) {
    let records: ReturnType<typeof readSpool>;
    try {
      records = readSpool(path);
    } catch {
      continue; // Removed by another process recovering it.
    }
    // Its runs keep the dead process as their owner, so the sweep that follows marks them interrupted.
    const replaying = new EventWriter(db, { owner: writer, durability: 'batched' });
    replaying.onWriteError = () => {};
    replaying.replay(records);
    const dropped = replaying.applyAll();
    void replaying.close();
    if (dropped.length) {
      // Only what the table still lacks stays, so the next try (every start, every resume) is short.
      try {
        writeFileSync(`${path}.next`, dropped.map((item) => pendingLines(item)).join(''));
        renameSync(`${path}.next`, path);
      } catch {
        // Left whole: applying it again skips what the table has.
      }
      continue;
    }
    rmSync(path, { force: true });
    // A rewrite the process was killed in the middle of (see Spool.replace).
    rmSync(`${path}.next`, { force: true });
    applied++;
  }
  return applied;
}
