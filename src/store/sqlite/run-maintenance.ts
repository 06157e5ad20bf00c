import { renameSync, rmSync, writeFileSync } from 'node:fs';
import type { CadreEvent } from '../../core/events.ts';
import { RunTreeBuilder } from '../../core/run-tree.ts';
import { interruptionEvents } from '../interruption-events.ts';
import { inflatePayloads } from '../payloads.ts';
import { currentOwner, processAlive, type RunOwner, runsStartedHere } from '../run-owner.ts';
import { type Database, transaction } from './database.ts';
import { EventWriter } from './event-writer.ts';
import { deadSpools, readSpool, spoolDirFor } from './spool.ts';
import { pendingLines } from './writer-spool.ts';

/**
 * Housekeeping of stored runs: runs whose process died are closed as `interrupted`, and whole trees can be
 * removed (one by id, or all older than a date). Kept apart from the recording path.
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
  const rows = db
    .prepare(
      "SELECT id, root_id, user_id, depth, owner_pid FROM runs WHERE status = 'running' AND owner_host = ?",
    )
    .all(owner.host) as Array<{
    id: string;
    root_id: string;
    user_id: string;
    depth: number;
    owner_pid: number;
  }>;
  // A run recorded with this process's id is an earlier process's (ids are reused) unless started here.
  const dead = rows.filter((row) =>
    row.owner_pid === owner.pid ? !runsStartedHere.has(row.id) : !isAlive(row.owner_pid),
  );
  if (!dead.length) return [];
  const now = options.now?.() ?? Date.now();
  const byRoot = Map.groupBy(dead, (row) => row.root_id);
  const marked: string[] = [];
  const writer = new EventWriter(db, { owner });
  for (const [rootId, runs] of byRoot) {
    const builder = new RunTreeBuilder();
    for (const event of treeEvents(db, rootId)) builder.apply(event);
    const lastSeq = new Map<string, number>();
    for (const row of db
      .prepare('SELECT run_id, MAX(seq) AS seq FROM events WHERE root_id = ? GROUP BY run_id')
      .all(rootId) as Array<{ run_id: string; seq: number }>)
      lastSeq.set(row.run_id, row.seq);
    for (const row of runs) {
      const node = builder.get(row.id);
      if (!node) continue;
      const seq = (lastSeq.get(row.id) ?? -1) + 1;
      for (const event of interruptionEvents(node, { ...row, rootId }, owner.host, seq, now))
        writer.enqueue(event);
      marked.push(row.id);
    }
  }
  await writer.close();
  return marked;
}

function treeEvents(db: Database, rootId: string): CadreEvent[] {
  const rows = db
    .prepare(
      `SELECT e.body, p.body AS payload FROM events e LEFT JOIN payloads p ON p.hash = e.payload_hash
       WHERE e.root_id = ? ORDER BY e.root_seq`,
    )
    .all(rootId) as Array<{ body: string; payload: string | null }>;
  return rows.map((row) => inflatePayloads(JSON.parse(row.body), row.payload) as CadreEvent);
}

/** Removes one whole run tree by its root's id; false when there is no such root run for this user. */
export function removeRunTree(db: Database, rootId: string, userId: string): boolean {
  const run = db
    .prepare('SELECT id FROM runs WHERE id = ? AND parent_id IS NULL AND user_id = ?')
    .get(rootId, userId);
  if (!run) return false;
  transaction(db, () => {
    deleteTree(db, rootId);
    deleteUnreferencedPayloads(db);
  });
  return true;
}

/**
 * Removes every finished run tree of this user started before `before` (ms); returns how many. An
 * interrupted tree is not finished: it can still be resumed, and a resume another process is starting
 * now must find its journal whole (its own attempt may not be in the table yet). It goes once a later
 * attempt of its journal has finished; until then only `runs rm` removes it.
 */
export function pruneRunTrees(db: Database, before: number, userId: string): number {
  const roots = db
    .prepare(
      `SELECT r.id FROM runs r WHERE r.parent_id IS NULL AND r.user_id = ? AND r.started_at < ?
         AND r.status != 'running'
         AND (r.status != 'interrupted' OR EXISTS (
           SELECT 1 FROM journal_attempts mine
             JOIN journal_attempts later ON later.journal_id = mine.journal_id
               AND (later.started_at, later.rowid) > (mine.started_at, mine.rowid)
             JOIN runs done ON done.id = later.root_run_id AND done.status NOT IN ('running', 'interrupted')
           WHERE mine.root_run_id = r.id))`,
    )
    .all(userId, before) as Array<{ id: string }>;
  transaction(db, () => {
    for (const { id } of roots) deleteTree(db, id);
    if (roots.length) deleteUnreferencedPayloads(db);
  });
  return roots.length;
}

/**
 * Deletes a tree's runs and events, and its attempt of a run journal; the journal's entries (model steps,
 * tool outputs) go with the last attempt that refers to them, so removing a run removes what it saw.
 */
function deleteTree(db: Database, rootId: string): void {
  db.prepare('DELETE FROM events WHERE root_id = ?').run(rootId);
  db.prepare('DELETE FROM runs WHERE root_id = ?').run(rootId);
  const attempt = db.prepare('SELECT journal_id FROM journal_attempts WHERE root_run_id = ?').get(rootId) as
    | { journal_id: string }
    | undefined;
  if (!attempt) return;
  db.prepare('DELETE FROM journal_attempts WHERE root_run_id = ?').run(rootId);
  db.prepare(
    'DELETE FROM journal WHERE journal_id = ? AND NOT EXISTS (SELECT 1 FROM journal_attempts WHERE journal_id = ?)',
  ).run(attempt.journal_id, attempt.journal_id);
}

/** Outputs are shared by content across trees and journals; one goes when nothing refers to it any more. */
function deleteUnreferencedPayloads(db: Database): void {
  db.prepare(
    `DELETE FROM payloads WHERE NOT EXISTS (SELECT 1 FROM events WHERE events.payload_hash = payloads.hash)
       AND NOT EXISTS (SELECT 1 FROM journal WHERE journal.payload_hash = payloads.hash)`,
  ).run();
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
