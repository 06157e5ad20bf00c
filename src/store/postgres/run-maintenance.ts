import type { CadreEvent } from '../../core/events.ts';
import { RunTreeBuilder } from '../../core/run-tree.ts';
import { closingEvents, interruptedMessage } from '../interruption-events.ts';
import { inflatePayloads } from '../payloads.ts';
import { currentOwner, processAlive, runsStartedHere } from '../run-owner.ts';
import { type Connection, type Database, transaction } from './database.ts';
import type { EventWriter } from './event-writer.ts';

/**
 * Marks `interrupted` every run still recorded as running whose owning process on this machine is gone,
 * with a `run-error` and a `run-finish` event each (so the rebuilt tree says so too). Runs other machines
 * own are theirs to judge. Returns the ids marked.
 */
export async function markInterruptedRuns(db: Database, writer: EventWriter): Promise<string[]> {
  const owner = currentOwner();
  const { rows } = await db.query<{ id: string; root_id: string; depth: number; owner_pid: number }>(
    "SELECT id, root_id, depth, owner_pid FROM runs WHERE status = 'running' AND owner_host = $1",
    [owner.host],
  );
  // A run recorded with this process's id is an earlier process's (ids are reused) unless started here.
  const dead = rows.filter((row) =>
    row.owner_pid === owner.pid ? !runsStartedHere.has(row.id) : !processAlive(row.owner_pid),
  );
  return closeRuns(db, writer, dead, (row) => interruptedMessage(row.owner_pid, owner.host));
}

/**
 * Marks `interrupted` every run of these trees still recorded as running: their jobs were taken off the
 * queue because the worker holding them is gone and no other could take them.
 */
export async function interruptTrees(
  db: Database,
  writer: EventWriter,
  trees: ReadonlyArray<{ rootRunId: string; pid: number; host: string }>,
): Promise<string[]> {
  const workers = new Map(trees.map((tree) => [tree.rootRunId, tree]));
  const { rows } = await db.query<{ id: string; root_id: string; depth: number }>(
    "SELECT id, root_id, depth FROM runs WHERE status = 'running' AND root_id = ANY($1::text[])",
    [[...workers.keys()]],
  );
  return closeRuns(db, writer, rows, (row) => {
    const worker = workers.get(row.root_id)!;
    return `${interruptedMessage(worker.pid, worker.host)} No other worker was there to take it.`;
  });
}

/** Writes the closing events of each run (a `run-error` and a `run-finish`, `interrupted`). */
async function closeRuns<Row extends { id: string; root_id: string; depth: number }>(
  db: Database,
  writer: EventWriter,
  rows: Row[],
  message: (row: Row) => string,
): Promise<string[]> {
  const marked: string[] = [];
  const now = Date.now();
  for (const [rootId, runs] of Map.groupBy(rows, (row) => row.root_id)) {
    const builder = new RunTreeBuilder();
    const lastSeq = new Map<string, number>();
    for (const event of await treeEvents(db, rootId)) {
      builder.apply(event);
      lastSeq.set(event.runId, Math.max(lastSeq.get(event.runId) ?? -1, event.seq));
    }
    for (const row of runs) {
      const node = builder.get(row.id);
      if (!node) continue;
      const seq = (lastSeq.get(row.id) ?? -1) + 1;
      for (const event of closingEvents(
        node,
        { depth: row.depth, rootId },
        seq,
        now,
        'interrupted',
        message(row),
      ))
        writer.enqueueEvent(event);
      marked.push(row.id);
    }
  }
  await writer.flush();
  return marked;
}

async function treeEvents(db: Database, rootId: string): Promise<CadreEvent[]> {
  const { rows } = await db.query<{ body: string; payload: string | null }>(
    `SELECT e.body, p.body AS payload FROM events e LEFT JOIN payloads p ON p.hash = e.payload_hash
     WHERE e.root_id = $1 ORDER BY e.root_seq`,
    [rootId],
  );
  return rows.map((row) => inflatePayloads(JSON.parse(row.body), row.payload) as CadreEvent);
}

/** Removes one whole run tree by its root's id; false when there is no such root run for this user. */
export async function removeRunTree(db: Database, rootId: string, userId: string): Promise<boolean> {
  return transaction(db, async (connection) => {
    const { rowCount } = await connection.query(
      'SELECT 1 FROM runs WHERE id = $1 AND parent_id IS NULL AND user_id = $2 FOR UPDATE',
      [rootId, userId],
    );
    if (!rowCount) return false;
    await deleteTree(connection, rootId);
    await deleteUnreferencedPayloads(connection);
    return true;
  });
}

/**
 * Removes every finished run tree of this user started before `before` (ms); returns how many. An
 * interrupted tree goes only once a later attempt of its journal has finished (see the SQLite store's
 * run-maintenance.ts for why).
 */
export async function pruneRunTrees(db: Database, before: number, userId: string): Promise<number> {
  return transaction(db, async (connection) => {
    const { rows } = await connection.query<{ id: string }>(
      `SELECT r.id FROM runs r WHERE r.parent_id IS NULL AND r.user_id = $1 AND r.started_at < $2
         AND r.status != 'running'
         AND (r.status != 'interrupted' OR EXISTS (
           SELECT 1 FROM journal_attempts mine
             JOIN journal_attempts later ON later.journal_id = mine.journal_id
               AND (later.started_at, later.position) > (mine.started_at, mine.position)
             JOIN runs done ON done.id = later.root_run_id AND done.status NOT IN ('running', 'interrupted')
           WHERE mine.root_run_id = r.id))`,
      [userId, before],
    );
    for (const { id } of rows) await deleteTree(connection, id);
    if (rows.length) await deleteUnreferencedPayloads(connection);
    return rows.length;
  });
}

/** Deletes a tree's runs, events and attempt; the journal's entries go with the last attempt using them. */
async function deleteTree(connection: Connection, rootId: string): Promise<void> {
  await connection.query('DELETE FROM events WHERE root_id = $1', [rootId]);
  await connection.query('DELETE FROM runs WHERE root_id = $1', [rootId]);
  const { rows } = await connection.query<{ journal_id: string }>(
    'DELETE FROM journal_attempts WHERE root_run_id = $1 RETURNING journal_id',
    [rootId],
  );
  const journalId = rows[0]?.journal_id;
  if (journalId === undefined) return;
  await connection.query(
    'DELETE FROM journal WHERE journal_id = $1 AND NOT EXISTS (SELECT 1 FROM journal_attempts WHERE journal_id = $1)',
    [journalId],
  );
}

/** Outputs are shared by content across trees and journals; one goes when nothing refers to it any more. */
async function deleteUnreferencedPayloads(connection: Connection): Promise<void> {
  await connection.query(
    `DELETE FROM payloads WHERE NOT EXISTS (SELECT 1 FROM events WHERE events.payload_hash = payloads.hash)
       AND NOT EXISTS (SELECT 1 FROM journal WHERE journal.payload_hash = payloads.hash)`,
  );
}
