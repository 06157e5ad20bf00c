/**
 * Chunk ids are handed out in per-user blocks: user slot `s` owns the ids [s · 2^32, (s + 1) · 2^32). The
 * slot also names the user's own FTS5 index (see user-index.ts), and a block keeps a user's chunks one
 * contiguous range of `chunks`, which makes their highest id one index probe. Slots are never reused
 * (AUTOINCREMENT). 2^32 ids per user and slots below 2^21 keep every id a safe JavaScript integer.
 */
import { SystemError } from '../../../core/errors.ts';
import type { Database } from '../database.ts';

const BLOCK = 2 ** 32;
const MAX_SLOT = 2 ** 21;

export interface ChunkIdRange {
  /** First id of the block (inclusive). */
  from: number;
  /** End of the block (exclusive). */
  to: number;
}

/** The user's slot, or undefined when they have never stored a chunk. */
export function userSlot(db: Database, userId: string): number | undefined {
  const row = db.prepare('SELECT slot FROM chunk_id_blocks WHERE user_id = ?').get(userId) as
    | { slot: number }
    | undefined;
  return row?.slot;
}

/** The user's slot, allocated on first use; `created` says it was. Call inside the inserting transaction. */
export function allocateSlot(db: Database, userId: string): { slot: number; created: boolean } {
  const created =
    db.prepare('INSERT OR IGNORE INTO chunk_id_blocks (user_id) VALUES (?)').run(userId).changes > 0;
  return { slot: userSlot(db, userId)!, created };
}

/** The ids a slot owns. */
export function blockOf(slot: number): ChunkIdRange {
  return { from: slot * BLOCK, to: (slot + 1) * BLOCK };
}

/** The first of `count` consecutive free ids in the slot's block. Call inside the inserting transaction. */
export function reserveChunkIds(db: Database, slot: number, count: number): number {
  const range = blockOf(slot);
  const last = highestId(db, range);
  const first = last === undefined ? range.from : last + 1;
  if (slot >= MAX_SLOT || first + count > range.to) {
    throw new SystemError('chunk-ids-exhausted', 'no chunk ids left for this user', { slot, count });
  }
  return first;
}

/**
 * About how many chunks one user has stored: their block counted up to its highest id, so removed chunks
 * below it still count. Cheap (one index probe), which is what the common-word check needs.
 */
export function chunkCount(db: Database, slot: number): number {
  const range = blockOf(slot);
  const last = highestId(db, range);
  return last === undefined ? 0 : last - range.from + 1;
}

function highestId(db: Database, range: ChunkIdRange): number | undefined {
  const row = db
    .prepare('SELECT max(id) AS last FROM chunks WHERE id >= ? AND id < ?')
    .get(range.from, range.to) as { last: number | null };
  return row.last ?? undefined;
}
