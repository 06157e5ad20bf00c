import { SystemError } from '../../../core/errors.ts';
import type { DocumentStore } from '../../../documents/document-store.ts';
import type { DocumentFilter, DocumentRecord, NewDocument, SearchHit } from '../../../documents/types.ts';
import { excerpt, normalizeTags, searchHit } from '../../document-rows.ts';
import { hasOperators } from '../../search-terms.ts';
import { SqlDocumentCatalogue } from '../../sql/document-catalogue.ts';
import { type Connection, type Database, Params, transaction } from '../database.ts';
import { PostgresSqlDatabase } from '../sql-port.ts';
import { decoded, fromPgText, toPgText } from '../text.ts';
import { filterConditions } from './filter-sql.ts';
import { type MatchMode, toTsQuery } from './ts-query.ts';

/** Chunk ids come in per-user blocks of 2^32 (as in the SQLite store): ids tell nothing of other users. */
const BLOCK = 2 ** 32;
const MAX_SLOT = 2 ** 21;

/** Marks and cuts of a snippet, as FTS5's snippet() makes them in the SQLite store. */
const HEADLINE = 'StartSel=«, StopSel=», MaxWords=24, MinWords=12, ShortWord=2, MaxFragments=1';

/**
 * The document store in PostgreSQL: the catalogue both backends read alike (sql/document-catalogue.ts),
 * and here writes, search and vectors. Every statement filters on the caller's user id, so an id that
 * belongs to someone else behaves exactly like one that does not exist. Keyword search matches each
 * chunk's generated `tsvector` (GIN-indexed) and ranks with `ts_rank`, which weighs a chunk by its own
 * words only: nobody else's documents move a user's scores or order.
 */
export class PostgresDocumentStore extends SqlDocumentCatalogue implements DocumentStore {
  #db: Database;

  constructor(db: Database) {
    super(new PostgresSqlDatabase(db));
    this.#db = db;
  }

  async insert(userId: string, document: NewDocument): Promise<DocumentRecord> {
    const tags = normalizeTags(document.tags);
    const chars = document.chunks.reduce((total, chunk) => total + chunk.text.length, 0);
    await transaction(this.#db, async (connection) => {
      await connection.query(
        `INSERT INTO documents (id, user_id, title, filename, type, pages, size, chars, hash, tags, added_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [
          document.id,
          userId,
          toPgText(document.title),
          toPgText(document.filename),
          document.type,
          document.pages,
          document.size,
          chars,
          document.hash,
          JSON.stringify(tags),
          document.addedAt,
        ],
      );
      await connection.query(
        'INSERT INTO document_tags (document_id, user_id, tag) SELECT $1, $2, unnest($3::text[])',
        [document.id, userId, tags.map(toPgText)],
      );
      const first = await reserveChunkIds(connection, userId, document.chunks.length);
      await connection.query(
        `INSERT INTO chunks (id, document_id, user_id, seq, page, start, "end", text)
         SELECT $1::bigint + c.seq - 1, $2, $3, c.seq - 1, c.page, c.start, c.start + c.length, c.text
         FROM unnest($4::int[], $5::int[], $6::int[], $7::text[]) WITH ORDINALITY AS c(page, start, length, text, seq)`,
        [
          first,
          document.id,
          userId,
          document.chunks.map((chunk) => chunk.page),
          document.chunks.map((chunk) => chunk.start),
          document.chunks.map((chunk) => chunk.text.length),
          document.chunks.map((chunk) => toPgText(chunk.text)),
        ],
      );
    });
    const { chunks: _chunks, ...metadata } = document;
    return { ...metadata, userId, tags, chars };
  }

  async remove(userId: string, id: string): Promise<boolean> {
    // Chunks, their vectors and tags go with the row (ON DELETE CASCADE), search entries with the chunks.
    const { rowCount } = await this.#db.query('DELETE FROM documents WHERE id = $1 AND user_id = $2', [
      id,
      userId,
    ]);
    return (rowCount ?? 0) > 0;
  }

  /**
   * Every term first; when no chunk has them all (and the query has no phrase, OR or exclusion whose
   * meaning that would change), any term, chunks with more of them ranking higher.
   */
  async keywordSearch(
    userId: string,
    query: string,
    options: { limit: number; filter?: DocumentFilter },
  ): Promise<SearchHit[]> {
    const hits = await this.#search(userId, query, 'all', options);
    if (hits.length || hasOperators(query)) return hits;
    return this.#search(userId, query, 'any', options);
  }

  async #search(
    userId: string,
    query: string,
    mode: MatchMode,
    options: { limit: number; filter?: DocumentFilter },
  ): Promise<SearchHit[]> {
    const params = new Params();
    const match = toTsQuery(query, mode, params);
    if (!match) return [];
    const user = params.add(userId);
    const where = [`c.user_id = ${user}`, `d.user_id = ${user}`, 'c.words @@ q.match'];
    where.push(...filterConditions(options.filter, params));
    // The snippet is made for the rows kept only: ts_headline parses the whole text again.
    const { rows } = await this.#db.query(
      `WITH q AS (SELECT ${match} AS match),
       top AS (
         SELECT c.id, c.document_id, c.page, c.start, c."end", c.text, d.title, d.filename, d.type,
                ts_rank(c.words, q.match) AS score, q.match
         FROM q, chunks c JOIN documents d ON d.id = c.document_id
         WHERE ${where.join(' AND ')}
         ORDER BY score DESC, c.id LIMIT ${params.add(options.limit)}
       )
       SELECT top.*, ts_headline('english', top.text, top.match, '${HEADLINE}') AS snippet FROM top
       ORDER BY score DESC, id`,
      params.values,
    );
    return rows.map((row) => hit(row, fromPgText(row.snippet), Number(row.score)));
  }

  async hitsForChunks(userId: string, chunkIds: number[]): Promise<SearchHit[]> {
    if (!chunkIds.length) return [];
    const { rows } = await this.#db.query(
      `SELECT c.id, c.document_id, c.page, c.start, c."end", c.text, d.title, d.filename, d.type
       FROM chunks c JOIN documents d ON d.id = c.document_id AND d.user_id = c.user_id
       WHERE c.user_id = $1 AND c.id = ANY($2::bigint[])`,
      [userId, chunkIds],
    );
    const byId = new Map(rows.map((row) => [Number(row.id), row]));
    return chunkIds.flatMap((id) => {
      const row = byId.get(id);
      return row ? [hit(row, excerpt(fromPgText(row.text)), 0)] : [];
    });
  }

  /** A row whose chunk is not in that document of the caller's is left out (nobody writes another's). */
  async putVectors(
    userId: string,
    documentId: string,
    model: string,
    rows: Array<{ chunkId: number; vector: number[] }>,
  ): Promise<void> {
    // One row per chunk, the last given winning, as a statement may not update a row twice.
    const latest = new Map(rows.map((row) => [row.chunkId, row.vector]));
    await this.#db.query(
      `INSERT INTO chunk_vectors (chunk_id, model, user_id, document_id, vector)
       SELECT c.id, $1, c.user_id, c.document_id, v.vector
       FROM unnest($2::bigint[], $3::bytea[]) AS v(chunk_id, vector)
       JOIN chunks c ON c.id = v.chunk_id AND c.user_id = $4 AND c.document_id = $5
       ON CONFLICT (chunk_id, model) DO UPDATE SET vector = excluded.vector`,
      [
        model,
        [...latest.keys()],
        [...latest.values()].map((vector) => Buffer.from(new Float32Array(vector).buffer)),
        userId,
        documentId,
      ],
    );
  }

  async vectors(
    userId: string,
    model: string,
    filter?: DocumentFilter,
  ): Promise<Array<{ chunkId: number; vector: Float32Array }>> {
    const params = new Params();
    const where = [
      `v.user_id = ${params.add(userId)}`,
      `v.model = ${params.add(model)}`,
      'd.user_id = v.user_id',
      ...filterConditions(filter, params),
    ];
    const { rows } = await this.#db.query<{ chunk_id: number; vector: Buffer }>(
      `SELECT v.chunk_id, v.vector FROM chunk_vectors v JOIN documents d ON d.id = v.document_id
       WHERE ${where.join(' AND ')}`,
      params.values,
    );
    return rows.map((row) => {
      const copy = new Uint8Array(row.vector);
      return { chunkId: row.chunk_id, vector: new Float32Array(copy.buffer, 0, copy.byteLength / 4) };
    });
  }
}

/**
 * The first of `count` consecutive free ids in the user's block, the block allocated on first use. Its
 * row is locked until the transaction ends, so two inserts for one user take their ids in turn.
 */
async function reserveChunkIds(connection: Connection, userId: string, count: number): Promise<number> {
  await connection.query(
    'INSERT INTO chunk_id_blocks (user_id) VALUES ($1) ON CONFLICT (user_id) DO NOTHING',
    [userId],
  );
  const { rows } = await connection.query<{ slot: number }>(
    'SELECT slot FROM chunk_id_blocks WHERE user_id = $1 FOR UPDATE',
    [userId],
  );
  const slot = rows[0]!.slot;
  const from = slot * BLOCK;
  const { rows: last } = await connection.query<{ id: number | null }>(
    'SELECT max(id) AS id FROM chunks WHERE id >= $1 AND id < $2',
    [from, from + BLOCK],
  );
  const first = last[0]?.id == null ? from : last[0].id + 1;
  if (slot >= MAX_SLOT || first + count > from + BLOCK)
    throw new SystemError('chunk-ids-exhausted', 'no chunk ids left for this user', { slot, count });
  return first;
}

/** A chunk row joined with its document as a hit, its free text read back (see text.ts). */
function hit(row: Record<string, unknown>, snippet: string, score: number) {
  return searchHit(decoded(row, ['title', 'filename', 'text']), snippet, score);
}
