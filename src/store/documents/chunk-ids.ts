/**
 * Chunk ids are handed out in per-user blocks: user slot `s` owns the ids [s · 2^32, (s + 1) · 2^32). A
 * user's chunks are then one contiguous rowid range of the FTS5 index, and a search can ask FTS5 for that
 * range (`rowid >= ? AND rowid < ?`), which it serves by skipping through its doclists. That keeps BM25 and
 * the owner check off every other user's matching rows, the bulk of a search's cost. Slots are never
 * reused (AUTOINCREMENT). 2^32 ids per user and slots below 2^21 keep every id a safe JavaScript integer.
 */
import { SystemError } from '../../core/errors.ts';
import type { Database } from '../database.ts';

const BLOCK = 2 ** 32;
const MAX_SLOT = 2 ** 21;

export interface ChunkIdRange {
  /** First id of the block (inclusive). */
  from: number;
  /** End of the block (exclusive). */
  to: number;
}

/** The user's block, or undefined when they have never stored a chunk. */
export function chunkIdRange(db: Database, userId: string): ChunkIdRange | undefined {
  const row = db.prepare('SELECT slot FROM chunk_id_blocks WHERE user_id = ?').get(userId) as
    | { slot: number }
    | undefined;
  return row ? blockOf(row.slot) : undefined;
}

/**
 * The first of `count` consecutive free ids in the user's block, allocating the block on first use. Call
 * inside the transaction that inserts the chunks.
 */
export function reserveChunkIds(db: Database, userId: string, count: number): number {
  db.prepare('INSERT OR IGNORE INTO chunk_id_blocks (user_id) VALUES (?)').run(userId);
  const range = chunkIdRange(db, userId)!;
  const row = db
    .prepare('SELECT max(id) AS last FROM chunks WHERE id >= ? AND id < ?')
    .get(range.from, range.to) as { last: number | null };
  const first = row.last === null ? range.from : row.last + 1;
  if (range.from >= MAX_SLOT * BLOCK || first + count > range.to) {
    throw new SystemError('chunk-ids-exhausted', 'no chunk ids left for this user', { userId, count });
  }
  return first;
}

/**
 * About how many chunks are stored, over all users: each block counted up to its highest id, so removed
 * chunks below it still count. Cheap (one index probe per user), which is what the common-word check needs.
 */
export function chunkCount(db: Database): number {
  const row = db
    .prepare(
      `SELECT sum((SELECT max(id) FROM chunks WHERE id >= b.slot * ${BLOCK} AND id < (b.slot + 1) * ${BLOCK})
                  - b.slot * ${BLOCK} + 1) AS n
       FROM chunk_id_blocks b`,
    )
    .get() as { n: number | null };
  return row.n ?? 0;
}

function blockOf(slot: number): ChunkIdRange {
  return { from: slot * BLOCK, to: (slot + 1) * BLOCK };
}
