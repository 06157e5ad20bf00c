import type { CadreEvent } from '../../core/events.ts';
import { RunTreeBuilder } from '../../core/run-tree.ts';
import { closingEvents } from '../interruption-events.ts';
import { inflatePayloads } from '../payloads.ts';
import { changes, row, rows, type SqlDatabase, type Transaction } from './sql-database.ts';

// Housekeeping of stored run trees, the same in every backend: whole trees removed (one by id, or all
// older than a date), and the events that close runs nothing runs any more.

/** Removes one whole run tree by its root's id; false when there is no such root run for this user. */
export function removeRunTree(sql: SqlDatabase, rootId: string, userId: string): Promise<boolean> {
  return sql.transaction(function* () {
    const root = yield* row(
      `SELECT 1 FROM runs WHERE id = ? AND parent_id IS NULL AND user_id = ?${sql.dialect.lockRow}`,
      [rootId, userId],
    );
    if (!root) return false;
    yield* deleteTree(rootId);
    yield* deleteUnreferencedPayloads();
    return true;
  });
}

/**
 * Removes every finished run tree of this user started before `before` (ms); returns how many. An
 * interrupted tree is not finished: it can still be resumed, and a resume another process is starting
 * now must find its journal whole (its own attempt may not be in the table yet). It goes once a later
 * attempt of its journal has finished; until then only `runs rm` removes it.
 */
export function pruneRunTrees(sql: SqlDatabase, before: number, userId: string): Promise<number> {
  const order = sql.dialect.rowid ?? 'position';
  return sql.transaction(function* () {
    const roots = yield* rows<{ id: string }>(
      `SELECT r.id FROM runs r WHERE r.parent_id IS NULL AND r.user_id = ? AND r.started_at < ?
         AND r.status != 'running'
         AND (r.status != 'interrupted' OR EXISTS (
           SELECT 1 FROM journal_attempts mine
             JOIN journal_attempts later ON later.journal_id = mine.journal_id
               AND (later.started_at, later.${order}) > (mine.started_at, mine.${order})
             JOIN runs done ON done.id = later.root_run_id AND done.status NOT IN ('running', 'interrupted')
           WHERE mine.root_run_id = r.id))`,
      [userId, before],
    );
    for (const { id } of roots) yield* deleteTree(id);
    if (roots.length) yield* deleteUnreferencedPayloads();
    return roots.length;
  });
}

/**
 * Deletes a tree's runs and events, and its attempt of a run journal; the journal's entries (model steps,
 * tool outputs) go with the last attempt that refers to them, so removing a run removes what it saw.
 */
function* deleteTree(rootId: string): Transaction<void> {
  yield* changes('DELETE FROM events WHERE root_id = ?', [rootId]);
  yield* changes('DELETE FROM run_conversations WHERE run_id IN (SELECT id FROM runs WHERE root_id = ?)', [
    rootId,
  ]);
  yield* changes('DELETE FROM runs WHERE root_id = ?', [rootId]);
  const attempt = yield* row<{ journal_id: string }>(
    'DELETE FROM journal_attempts WHERE root_run_id = ? RETURNING journal_id',
    [rootId],
  );
  if (!attempt) return;
  yield* changes(
    'DELETE FROM journal WHERE journal_id = ? AND NOT EXISTS (SELECT 1 FROM journal_attempts WHERE journal_id = ?)',
    [attempt.journal_id, attempt.journal_id],
  );
}

/** Outputs are shared by content across trees and journals; one goes when nothing refers to it any more. */
function* deleteUnreferencedPayloads(): Transaction<void> {
  yield* changes(
    `DELETE FROM payloads WHERE NOT EXISTS (SELECT 1 FROM events WHERE events.payload_hash = payloads.hash)
       AND NOT EXISTS (SELECT 1 FROM journal WHERE journal.payload_hash = payloads.hash)`,
  );
}

/**
 * The events that close each of these runs as `interrupted` (a `run-error` with `message` and a
 * `run-finish` with the usage its finished steps recorded), numbered after each run's last stored event,
 * and the ids of the runs they close.
 */
export async function interruptionsOf<Run extends { id: string; root_id: string; depth: number }>(
  sql: SqlDatabase,
  runs: readonly Run[],
  message: (run: Run) => string,
  now: number,
): Promise<{ events: CadreEvent[]; marked: string[] }> {
  const events: CadreEvent[] = [];
  const marked: string[] = [];
  for (const [rootId, ofTree] of Map.groupBy(runs, (run) => run.root_id)) {
    const builder = new RunTreeBuilder();
    const lastSeq = new Map<string, number>();
    for (const event of await treeEvents(sql, rootId)) {
      builder.apply(event);
      lastSeq.set(event.runId, Math.max(lastSeq.get(event.runId) ?? -1, event.seq));
    }
    for (const run of ofTree) {
      const node = builder.get(run.id);
      if (!node) continue;
      const seq = (lastSeq.get(run.id) ?? -1) + 1;
      events.push(
        ...closingEvents(node, { depth: run.depth, rootId }, seq, now, 'interrupted', message(run)),
      );
      marked.push(run.id);
    }
  }
  return { events, marked };
}

async function treeEvents(sql: SqlDatabase, rootId: string): Promise<CadreEvent[]> {
  const stored = await sql.all<{ body: string; payload: string | null }>(
    `SELECT e.body, p.body AS payload FROM events e LEFT JOIN payloads p ON p.hash = e.payload_hash
     WHERE e.root_id = ? ORDER BY e.root_seq`,
    [rootId],
  );
  return stored.map((event) => inflatePayloads(JSON.parse(event.body), event.payload) as CadreEvent);
}
