import { interruptedMessage } from '../interruption-events.ts';
import { currentOwner, processAlive, runsStartedHere } from '../run-owner.ts';
import { interruptionsOf } from '../sql/run-trees.ts';
import type { SqlDatabase } from '../sql/sql-database.ts';
import type { EventWriter } from './event-writer.ts';

/**
 * Marks `interrupted` every run still recorded as running whose owning process on this machine is gone,
 * with a `run-error` and a `run-finish` event each (so the rebuilt tree says so too). Runs other machines
 * own are theirs to judge. Returns the ids marked.
 */
export async function markInterruptedRuns(sql: SqlDatabase, writer: EventWriter): Promise<string[]> {
  const owner = currentOwner();
  const running = await sql.all<{ id: string; root_id: string; depth: number; owner_pid: number }>(
    "SELECT id, root_id, depth, owner_pid FROM runs WHERE status = 'running' AND owner_host = ?",
    [owner.host],
  );
  // A run recorded with this process's id is an earlier process's (ids are reused) unless started here.
  const dead = running.filter((run) =>
    run.owner_pid === owner.pid ? !runsStartedHere.has(run.id) : !processAlive(run.owner_pid),
  );
  return closeRuns(sql, writer, dead, (run) => interruptedMessage(run.owner_pid, owner.host));
}

/**
 * Marks `interrupted` every run of these trees still recorded as running: their jobs were taken off the
 * queue because the worker holding them is gone and no other could take them.
 */
export async function interruptTrees(
  sql: SqlDatabase,
  writer: EventWriter,
  trees: ReadonlyArray<{ rootRunId: string; pid: number; host: string }>,
): Promise<string[]> {
  if (!trees.length) return [];
  const workers = new Map(trees.map((tree) => [tree.rootRunId, tree]));
  const roots = [...workers.keys()];
  const running = await sql.all<{ id: string; root_id: string; depth: number }>(
    `SELECT id, root_id, depth FROM runs WHERE status = 'running' AND root_id IN (${roots.map(() => '?').join(', ')})`,
    roots,
  );
  return closeRuns(sql, writer, running, (run) => {
    const worker = workers.get(run.root_id)!;
    return `${interruptedMessage(worker.pid, worker.host)} No other worker was there to take it.`;
  });
}

/** Writes the closing events of each run (a `run-error` and a `run-finish`, `interrupted`). */
async function closeRuns<Run extends { id: string; root_id: string; depth: number }>(
  sql: SqlDatabase,
  writer: EventWriter,
  runs: Run[],
  message: (run: Run) => string,
): Promise<string[]> {
  const { events, marked } = await interruptionsOf(sql, runs, message, Date.now());
  for (const event of events) writer.enqueueEvent(event);
  await writer.flush();
  return marked;
}
