import {
  awaitTransaction,
  type SqlDatabase,
  type SqlDialect,
  type Statement,
  type Transaction,
} from '../sql/sql-database.ts';
import { type Database, execute, numbered, Params, type Queryable, transaction } from './database.ts';
import { toTsQuery } from './documents/ts-query.ts';
import { fromPgText, toPgText } from './text.ts';

/** PostgreSQL's side of the shared stores' differences. */
export const POSTGRES_DIALECT: SqlDialect = {
  name: 'postgres',
  rowid: undefined,
  lockRow: ' FOR UPDATE',
  likeAnyCase: 'ILIKE',
  titleOrder: 'lower(d.title)',
  dateOf: (column, unit) =>
    `to_char(to_timestamp(${column} / 1000.0) AT TIME ZONE 'UTC', '${unit === 'day' ? 'YYYY-MM-DD' : 'YYYY-MM'}')`,
  storedText: toPgText,
  readText: fromPgText,
  messageSearch(userId, query, limit) {
    // Written with `$n` placeholders of its own (toTsQuery builds them); `?` appears in none.
    const params = new Params();
    const tsquery = toTsQuery(query, 'all', params);
    if (!tsquery) return undefined;
    const user = params.add(userId);
    const count = params.add(limit);
    return {
      sql: `SELECT m.session_id, m.id AS message_id, s.title, m.role, m.created_at,
                   ts_headline('english', m.content, query.q, 'StartSel="", StopSel="", MaxWords=24, MinWords=12, MaxFragments=1') AS line
              FROM (SELECT ${tsquery} AS q) AS query
              JOIN messages m ON m.search @@ query.q
              JOIN sessions s ON s.user_id = m.user_id AND s.id = m.session_id
             WHERE m.user_id = ${user}
             ORDER BY ts_rank(m.search, query.q) DESC, m.created_at DESC
             LIMIT ${count}`,
      params: params.values,
    };
  },
};

/**
 * The SQL port over a pool of PostgreSQL connections: `?` placeholders become `$1…` (a statement that
 * already numbers its own is sent as it is), and a transaction runs on one connection.
 */
export class PostgresSqlDatabase implements SqlDatabase {
  readonly dialect = POSTGRES_DIALECT;
  readonly #db: Database;
  /** Each statement's text with its placeholders numbered, by its text as the stores write it. */
  readonly #numbered = new Map<string, string>();

  constructor(db: Database) {
    this.#db = db;
  }

  async all<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return (await this.#execute(this.#db, { sql, params, wants: 'rows' })) as T[];
  }

  each<T>(sql: string, params: readonly unknown[] = []): Promise<Iterable<T>> {
    return this.all<T>(sql, params);
  }

  async one<T>(sql: string, params: readonly unknown[] = []): Promise<T | undefined> {
    return (await this.all<T>(sql, params))[0];
  }

  async run(sql: string, params: readonly unknown[] = []): Promise<number> {
    return (await this.#execute(this.#db, { sql, params, wants: 'changes' })) as number;
  }

  transaction<T>(work: () => Transaction<T>): Promise<T> {
    return transaction(this.#db, (connection) =>
      awaitTransaction(work(), (statement) => this.#execute(connection, statement)),
    );
  }

  #execute(db: Queryable, statement: Statement): Promise<unknown> {
    let text = this.#numbered.get(statement.sql);
    if (text === undefined) {
      text = numbered(statement.sql);
      this.#numbered.set(statement.sql, text);
    }
    return execute(db, statement, text);
  }
}
