import type { StatementSync } from 'node:sqlite';
import {
  runTransaction,
  type SqlDatabase,
  type SqlDialect,
  type Statement,
  type Transaction,
} from '../sql/sql-database.ts';
import { type Database, execute, type SqliteValue, transaction } from './database.ts';
import { toMatchExpression } from './documents/fts-query.ts';

/** SQLite's side of the shared stores' differences. */
export const SQLITE_DIALECT: SqlDialect = {
  name: 'sqlite',
  rowid: 'rowid',
  lockRow: '',
  likeAnyCase: 'LIKE',
  titleOrder: 'd.title COLLATE NOCASE',
  dateOf: (column, unit) =>
    `strftime('${unit === 'day' ? '%Y-%m-%d' : '%Y-%m'}', ${column} / 1000, 'unixepoch')`,
  storedText: (text) => text,
  readText: (text) => text,
  messageSearch(userId, query, limit) {
    const match = toMatchExpression(query);
    if (!match) return undefined;
    return {
      sql: `SELECT f.session_id, f.message_id, s.title, m.role, m.created_at,
                   snippet(message_search, 3, '', '', '…', 16) AS line
              FROM message_search f
              JOIN messages m ON m.user_id = f.user_id AND m.session_id = f.session_id AND m.id = f.message_id
              JOIN sessions s ON s.user_id = f.user_id AND s.id = f.session_id
             WHERE message_search MATCH ? AND f.user_id = ?
             ORDER BY rank LIMIT ?`,
      params: [match, userId, limit],
    };
  },
};

/**
 * The SQL port over one node:sqlite connection. Everything runs synchronously when called (the promise
 * is already settled), as the stores did before the port; a transaction runs to its end at once, inside
 * `BEGIN IMMEDIATE` (see database.ts `transaction`). Prepared statements are kept by their text.
 */
export class SqliteSqlDatabase implements SqlDatabase {
  readonly dialect = SQLITE_DIALECT;
  readonly #db: Database;
  readonly #statements = new Map<string, StatementSync>();

  constructor(db: Database) {
    this.#db = db;
  }

  async all<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return this.#execute({ sql, params, wants: 'rows' }) as T[];
  }

  async each<T>(sql: string, params: readonly unknown[] = []): Promise<Iterable<T>> {
    // A statement of its own: a shared one would be reset under this iterator by the next call.
    return this.#db.prepare(sql).iterate(...(params as SqliteValue[])) as Iterable<T>;
  }

  async one<T>(sql: string, params: readonly unknown[] = []): Promise<T | undefined> {
    return this.#prepare(sql).get(...(params as SqliteValue[])) as T | undefined;
  }

  async run(sql: string, params: readonly unknown[] = []): Promise<number> {
    return this.#execute({ sql, params, wants: 'changes' }) as number;
  }

  async transaction<T>(work: () => Transaction<T>): Promise<T> {
    return transaction(this.#db, () => runTransaction(work(), (statement) => this.#execute(statement)));
  }

  #execute(statement: Statement): unknown {
    return execute(this.#db, statement, (sql) => this.#prepare(sql));
  }

  #prepare(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }
}
