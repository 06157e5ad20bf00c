/**
 * The small SQL port the stores both backends share are written over (store/sql/), with one adapter per
 * backend (sqlite/sql-port.ts, postgres/sql-port.ts). Statements are written once, with `?` placeholders
 * (SQLite's own; the PostgreSQL adapter numbers them `$1…`), in the SQL both dialects accept (`ON CONFLICT
 * … DO UPDATE SET x = excluded.x`, `COALESCE`, `LIMIT`); where they truly differ the store asks the
 * dialect (`SqlDialect`).
 *
 * A transaction is a generator of statements (`yield* rows(…)`), not an async function: the SQLite
 * adapter runs it to the end synchronously, as node:sqlite does everything, so no other code of the
 * process can slip a statement (an event writer's slice) into it between two awaits on the one
 * connection; the PostgreSQL adapter awaits each statement on one pooled connection.
 */

/** One statement of a transaction: its text, its values, and whether its rows or its count are wanted. */
export interface Statement {
  sql: string;
  params: readonly unknown[];
  /** `script`: several statements with no values (a migration), whose result is not wanted. */
  wants: 'rows' | 'changes' | 'script';
}

/** The body of a transaction: yields statements, gets each one's result back, returns its own. */
export type Transaction<T> = Generator<Statement, T, unknown>;

/** The rows a statement reads, inside a transaction (`yield* rows(…)`). */
export function* rows<T>(sql: string, params: readonly unknown[] = []): Generator<Statement, T[], unknown> {
  return (yield { sql, params, wants: 'rows' }) as T[];
}

/** The first row a statement reads, if any, inside a transaction. */
export function* row<T>(
  sql: string,
  params: readonly unknown[] = [],
): Generator<Statement, T | undefined, unknown> {
  return (yield* rows<T>(sql, params))[0];
}

/** How many rows a statement changed, inside a transaction. */
export function* changes(
  sql: string,
  params: readonly unknown[] = [],
): Generator<Statement, number, unknown> {
  return (yield { sql, params, wants: 'changes' }) as number;
}

/** Runs several statements with no values (a migration's), inside a transaction. */
export function* script(sql: string): Generator<Statement, void, unknown> {
  yield { sql, params: [], wants: 'script' };
}

/** Where the two dialects differ for the shared stores. */
export interface SqlDialect {
  readonly name: 'sqlite' | 'postgres';
  /**
   * Added to a SELECT of the row a transaction then writes on behalf of (a session's), so two processes
   * writing for it take turns: PostgreSQL's `FOR UPDATE`; nothing in SQLite, whose write transactions
   * take the database's one write lock at BEGIN.
   */
  readonly lockRow: string;
  /**
   * The column that orders rows written in the same millisecond as they were written, where the table
   * has none of its own: SQLite's `rowid`; undefined in PostgreSQL, whose tables have no such column.
   */
  readonly rowid: string | undefined;
  /** A pattern match that ignores case (SQLite's `LIKE` already does, for ASCII; PostgreSQL's `ILIKE`). */
  readonly likeAnyCase: 'LIKE' | 'ILIKE';
  /** A title as documents are ordered by it, ignoring case. */
  readonly titleOrder: string;
  /** The UTC day (`YYYY-MM-DD`) or month (`YYYY-MM`) of a column of milliseconds, as text. */
  dateOf(column: string, unit: 'day' | 'month'): string;
  /** A person's text as a text column stores it (PostgreSQL's cannot hold NUL: see postgres/text.ts). */
  storedText(text: string): string;
  /** The text `storedText` stored. */
  readText(text: string): string;
  /**
   * The statement finding a user's messages that match `query` (FTS5 in SQLite, tsvector in PostgreSQL),
   * best first; undefined when the query has no word to look for. Its rows: session_id, message_id,
   * title, role, created_at, line (a snippet).
   */
  messageSearch(userId: string, query: string, limit: number): { sql: string; params: unknown[] } | undefined;
}

/** A database the shared stores use: one statement at a time, or a transaction. */
export interface SqlDatabase {
  readonly dialect: SqlDialect;
  /** The rows `sql` reads. */
  all<T>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /**
   * The rows `sql` reads, fetched as they are iterated where the driver can (SQLite), for a reader that
   * may stop early (a page of events up to a size). Iterate it at once, before awaiting anything else.
   */
  each<T>(sql: string, params?: readonly unknown[]): Promise<Iterable<T>>;
  /** The first row `sql` reads, if any. */
  one<T>(sql: string, params?: readonly unknown[]): Promise<T | undefined>;
  /** Runs a statement; how many rows it changed. */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
  /** Runs `work` in one write transaction: committed when it returns, rolled back when it throws. */
  transaction<T>(work: () => Transaction<T>): Promise<T>;
}

/** Runs a transaction's statements through `execute` as they come (the SQLite adapter's way). */
export function runTransaction<T>(work: Transaction<T>, execute: (statement: Statement) => unknown): T {
  let step = work.next();
  while (!step.done) {
    let result: unknown;
    try {
      result = execute(step.value);
    } catch (error) {
      step = work.throw(error);
      continue;
    }
    step = work.next(result);
  }
  return step.value;
}

/** Runs a transaction's statements through `execute`, awaiting each (the PostgreSQL adapter's way). */
export async function awaitTransaction<T>(
  work: Transaction<T>,
  execute: (statement: Statement) => Promise<unknown>,
): Promise<T> {
  let step = work.next();
  while (!step.done) {
    let result: unknown;
    try {
      result = await execute(step.value);
    } catch (error) {
      step = work.throw(error);
      continue;
    }
    step = work.next(result);
  }
  return step.value;
}
