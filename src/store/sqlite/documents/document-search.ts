import type { SQLInputValue, StatementSync } from 'node:sqlite';
import type { DocumentFilter, SearchHit } from '../../../documents/types.ts';
import { excerpt, searchHit } from '../../document-rows.ts';
import { hasOperators } from '../../search-terms.ts';
import { documentFilter } from '../../sql/document-catalogue.ts';
import { type Database, transaction } from '../database.ts';
import { SQLITE_DIALECT } from '../sql-port.ts';
import { chunkCount } from './chunk-ids.ts';
import { onlyCommonTerms, plainTerms, toMatchExpression } from './fts-query.ts';
import { userIndex } from './user-index.ts';

/** The conditions of a document filter (sql/document-catalogue.ts), with values node:sqlite binds. */
function sqliteFilter(filter: DocumentFilter | undefined): { sql: string[]; params: SQLInputValue[] } {
  const { sql, params } = documentFilter(filter, SQLITE_DIALECT);
  return { sql, params: params as SQLInputValue[] };
}

/** In the any-term fallback, words found in more than this share of chunks are dropped. */
const FALLBACK_COMMON_SHARE = 0.05;

/** Prepares each SQL text once per database and hands back the same statement after that. */
export function statementCache(db: Database): (sql: string) => StatementSync {
  const statements = new Map<string, StatementSync>();
  return (sql) => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
}

/**
 * Search over the document catalogue: keyword search in each user's own FTS5 index and the embedding
 * vectors for semantic search. Like the catalogue, every method filters on the caller's user id.
 */
export class DocumentSearch {
  readonly db: Database;
  readonly #statements: (sql: string) => StatementSync;

  constructor(db: Database) {
    this.db = db;
    this.#statements = statementCache(db);
  }

  /**
   * Keyword search: chunks matching an FTS5 expression (see `toMatchExpression`), best BM25 first.
   *
   * 1. Rank: in the caller's own index (see user-index.ts), so neither the matches nor BM25's statistics
   *    involve anyone else's chunks; a filter adds a join on a covering index of owners. `ranked: false` (a
   *    query of only very common words, which BM25 cannot rank anyway) takes the first matches in
   *    collection order and scores just those.
   * 2. Snippets for the top rows, in one pass over the index between the lowest and highest of their ids.
   *    Looking each row up on its own would set the query up again per row: a prefix term's doclist is
   *    rebuilt each time, and bm25 recounts every term's matches in the whole index to get its weight.
   * 3. Titles and texts for the top rows, which are checked against the caller once more.
   */
  search(
    userId: string,
    match: string,
    options: { filter?: DocumentFilter; limit?: number; ranked?: boolean } = {},
  ): SearchHit[] {
    const index = userIndex(this.db, userId);
    if (!index) return [];
    const fts = index.fts;
    const { documentIds, ...rest } = options.filter ?? {};
    const { sql, params } = sqliteFilter(rest);
    const conditions = [`${fts} MATCH ?`];
    const joined = sql.length > 0 || Boolean(documentIds?.length);
    if (joined) conditions.push('c.user_id = ?', ...sql);
    const idParams: SQLInputValue[] = documentIds?.length ? documentIds : [];
    if (idParams.length) conditions.push(`c.document_id IN (${idParams.map(() => '?').join(', ')})`);
    const ranked = options.ranked ?? true;
    const rows = this.db
      .prepare(
        `WITH top AS MATERIALIZED (
           SELECT ${fts}.rowid AS id, bm25(${fts}) AS score
           FROM ${fts}
           ${joined ? `JOIN chunks c INDEXED BY chunks_owner ON c.id = ${fts}.rowid` : ''}
           ${sql.length ? 'JOIN documents d ON d.id = c.document_id' : ''}
           WHERE ${conditions.join(' AND ')}
           ${ranked ? 'ORDER BY score' : ''} LIMIT ?
         ),
         snippets AS MATERIALIZED (
           SELECT ${fts}.rowid AS id, snippet(${fts}, 0, '«', '»', '…', 24) AS snippet
           FROM ${fts}
           WHERE ${fts} MATCH ?
             AND ${fts}.rowid >= (SELECT min(id) FROM top) AND ${fts}.rowid <= (SELECT max(id) FROM top)
             AND +${fts}.rowid IN (SELECT id FROM top)
         )
         SELECT c.id, c.document_id, c.page, c.start, c.end, c.text, d.title, d.filename, d.type,
                s.snippet, top.score
         FROM top
         JOIN snippets s ON s.id = top.id
         JOIN chunks c ON c.id = top.id
         JOIN documents d ON d.id = c.document_id
         WHERE c.user_id = ? AND d.user_id = ?
         ORDER BY top.score, c.id`,
      )
      .all(
        match,
        ...(joined ? [userId, ...params] : []),
        ...idParams,
        options.limit ?? 10,
        match,
        userId,
        userId,
      );
    return rows.map((row) => searchHit(row, String(row.snippet), -Number(row.score)));
  }

  /**
   * Which of these words are in more than `share` of the caller's chunks (once they have at least
   * `minChunks`). Such words carry almost no BM25 weight, and ranking every chunk that holds them is what
   * makes a query slow. Only the caller's own chunks count, so the answer says nothing of anyone else's.
   * Words are looked up as typed; a word the stemmer changes is simply never reported common.
   */
  commonTerms(userId: string, words: string[], share = 0.2, minChunks = 2_000): Set<string> {
    const common = new Set<string>();
    const index = userIndex(this.db, userId);
    if (!words.length || !index) return common;
    const total = chunkCount(this.db, index.slot);
    if (total < minChunks) return common;
    const lookup = this.#statements(`SELECT doc FROM ${index.vocab} WHERE term = ?`);
    for (const word of new Set(words.map((item) => item.toLowerCase()))) {
      const row = lookup.get(word) as { doc: number } | undefined;
      if (row && row.doc > total * share) common.add(word);
    }
    return common;
  }

  /**
   * BM25 search over FTS5 for a person's query, all terms first, any term as the fallback. Words found
   * in a fifth of the caller's chunks or more are left out of the match (they carry little BM25 weight);
   * a query made only of them is answered unranked.
   */
  keywordSearch(
    userId: string,
    query: string,
    options: { limit: number; filter?: DocumentFilter },
  ): SearchHit[] {
    const common = this.commonTerms(userId, plainTerms(query));
    const strict = toMatchExpression(query, 'all', common);
    if (!strict) return [];
    const ranked = !onlyCommonTerms(query, common);
    const hits = this.search(userId, strict, { ...options, ranked });
    if (hits.length || hasOperators(query)) return hits;
    // "Any term" ranks the union of every term's matches; words in many chunks would make that union
    // large while adding little to the ranking, so the fallback leaves them out when rarer words remain.
    const frequent = this.commonTerms(userId, plainTerms(query), FALLBACK_COMMON_SHARE);
    const loose = toMatchExpression(query, 'any', frequent);
    return loose && loose !== strict ? this.search(userId, loose, { ...options, ranked }) : hits;
  }

  /** Chunks by id (for vector hits), the caller's only, in the order asked. */
  hitsForChunks(userId: string, chunkIds: number[]): SearchHit[] {
    if (!chunkIds.length) return [];
    const rows = this.db
      .prepare(
        `SELECT c.id, c.document_id, c.page, c.start, c.end, c.text, d.title, d.filename, d.type
         FROM chunks c JOIN documents d ON d.id = c.document_id
         WHERE c.user_id = ? AND c.id IN (${chunkIds.map(() => '?').join(', ')})`,
      )
      .all(userId, ...chunkIds);
    const byId = new Map(rows.map((row) => [Number(row.id), row]));
    return chunkIds.flatMap((id) => {
      const row = byId.get(id);
      return row ? [searchHit(row, excerpt(String(row.text)), 0)] : [];
    });
  }

  /**
   * Stores embedding vectors for chunks of one of the caller's documents, one per chunk and model. A row
   * whose chunk is not in that document of the caller's is left out, so nobody can overwrite another
   * user's vectors by naming their chunk ids.
   */
  putVectors(
    userId: string,
    documentId: string,
    model: string,
    rows: Array<{ chunkId: number; vector: number[] }>,
  ) {
    transaction(this.db, () => {
      const insert = this.#statements(
        `INSERT OR REPLACE INTO chunk_vectors (chunk_id, user_id, document_id, model, vector)
         SELECT id, user_id, document_id, ?, ? FROM chunks WHERE id = ? AND user_id = ? AND document_id = ?`,
      );
      for (const row of rows) {
        const blob = new Uint8Array(new Float32Array(row.vector).buffer);
        insert.run(model, blob, row.chunkId, userId, documentId);
      }
    });
  }

  /** The caller's vectors for one embedding model, narrowed by a filter. */
  vectors(
    userId: string,
    model: string,
    filter?: DocumentFilter,
  ): Array<{ chunkId: number; vector: Float32Array }> {
    const { sql, params } = sqliteFilter(filter);
    const rows = this.db
      .prepare(
        `SELECT v.chunk_id, v.vector FROM chunk_vectors v JOIN documents d ON d.id = v.document_id
         WHERE ${['v.user_id = ?', 'v.model = ?', 'd.user_id = v.user_id', ...sql].join(' AND ')}`,
      )
      .all(userId, model, ...params);
    return rows.map((row) => {
      const bytes = row.vector as Uint8Array;
      const copy = bytes.slice();
      return { chunkId: Number(row.chunk_id), vector: new Float32Array(copy.buffer, 0, copy.byteLength / 4) };
    });
  }
}
