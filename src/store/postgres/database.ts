import pg from 'pg';
import { SystemError } from '../../core/errors.ts';
import { localKey, processAlive } from '../run-owner.ts';
import { applyMigrations } from '../sql/migrations.ts';
import { awaitTransaction, changes, type Statement } from '../sql/sql-database.ts';
import { MIGRATIONS } from './migrations.ts';

/** A pool of connections to Cadre's PostgreSQL database. */
export type Database = pg.Pool;
/** One connection, inside a transaction. */
export type Connection = pg.PoolClient;
/** Anything a statement can be sent through: the pool, or a connection in a transaction. */
export type Queryable = pg.Pool | pg.PoolClient;

const BIGINT_OID = 20;

/**
 * Connects to `url` (a `postgres://` URL) and brings the schema up to date. `schema` keeps Cadre's tables
 * in their own PostgreSQL schema (created when missing): tests give each store a fresh one.
 */
export async function openDatabase(url: string, options: { schema?: string } = {}): Promise<Database> {
  const schema = options.schema;
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema))
    throw new SystemError('bad_schema', `"${schema}" is not a usable PostgreSQL schema name.`, { schema });
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    // A connection the network dropped silently (a NAT's idle timeout) is noticed: a worker's lease
    // connection lost that way would otherwise look held to it while every other process sees it gone.
    keepAlive: true,
    application_name: sessionName(),
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
    // Counts, sums and millisecond times are BIGINT: numbers, not strings (all stay below 2^53).
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === BIGINT_OID ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle connection the server dropped (a restart) must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  try {
    if (schema) await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await migrate(pool);
  } catch (error) {
    await pool.end();
    if (error instanceof SystemError) throw error;
    throw new SystemError(
      'database_unusable',
      `Cadre cannot use the PostgreSQL database at ${redacted(url)} (${(error as Error).message}). ` +
        'Check CADRE_DATABASE_URL (or database.url) and that the server is running.',
      { url: redacted(url) },
      error,
    );
  }
  return pool;
}

/**
 * What this process's database sessions are called (`application_name`): its pid and where that pid means
 * something (`localKey`), so another process of this machine can end the sessions of one that died. Every
 * connection Cadre opens carries it (the store's pool, the job queue's, the listening one). A URL that
 * sets its own `application_name` wins: the sessions are then not recognised, and only their lease, let
 * go when the database notices the process is gone, says it died.
 */
export function sessionName(): string {
  return localKey() ? `cadre ${process.pid} ${localKey()}` : 'cadre';
}

/** The longest a sweep waits for the sessions of one dead process to end. */
const END_WAIT_MS = 1000;

/**
 * Ends the database sessions of cadre processes of this machine that have died. A process killed with
 * SIGKILL leaves its sessions behind for a moment (longer on a loaded machine): a statement it sent last
 * may still commit, and a lease or claim it held still looks held. Ended here, what a sweep reads next is
 * final. Left alone: sessions of live processes; of other machines (another local key, or another client
 * address: cloned machines can share a name and a boot); and ones this role may not end.
 */
export async function endSessionsOfDeadProcesses(db: Queryable): Promise<void> {
  if (!localKey()) return;
  const { rows } = await db.query<{ backend: number; name: string }>(
    `SELECT a.pid AS backend, a.application_name AS name FROM pg_stat_activity a
     WHERE a.application_name LIKE $1 AND a.pid <> pg_backend_pid()
       AND a.client_addr IS NOT DISTINCT FROM inet_client_addr()
       AND pg_has_role(a.usesysid, 'MEMBER')
       AND (NOT (SELECT rolsuper FROM pg_roles WHERE oid = a.usesysid)
            OR (SELECT rolsuper FROM pg_roles WHERE rolname = current_user))`,
    [`cadre % ${localKey()}`],
  );
  const dead = rows.filter((row) => {
    const pid = Number(row.name.split(' ')[1]);
    return Number.isInteger(pid) && pid !== process.pid && !processAlive(pid);
  });
  // Each waited for (together, for at most END_WAIT_MS), so nothing it had under way lands afterwards.
  await Promise.all(dead.map(({ backend }) => endSession(db, backend)));
}

async function endSession(db: Queryable, backend: number): Promise<void> {
  try {
    await db.query('SELECT pg_terminate_backend($1, $2)', [backend, END_WAIT_MS]);
  } catch (error) {
    // PostgreSQL 13 has no waiting form: end it, then look until it is gone.
    if ((error as { code?: string }).code !== '42883') return;
    await db.query('SELECT pg_terminate_backend($1)', [backend]).catch(() => {});
    for (const started = Date.now(); Date.now() - started < END_WAIT_MS; ) {
      const { rowCount } = await db.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [backend]);
      if (!rowCount) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/** The URL without its password, for messages. */
export function redacted(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://…';
  }
}

/**
 * Applies every migration not yet recorded, in list order, in one transaction (sql/migrations.ts). An
 * advisory lock taken first makes several processes starting on a fresh database apply each migration
 * exactly once: the others wait for it, then find nothing left to do.
 */
export async function migrate(db: Database): Promise<void> {
  await transaction(db, (connection) =>
    awaitTransaction(
      (function* () {
        yield* changes("SELECT pg_advisory_xact_lock(hashtext('cadre-migrations'))");
        yield* applyMigrations(MIGRATIONS, 'BIGINT');
      })(),
      (statement) => execute(connection, statement),
    ),
  );
}

/**
 * Sends one statement of a transaction (sql/sql-database.ts): its rows, how many rows it changed, or
 * nothing for a script (sent as it is, several statements in one). `text` is the statement with its
 * placeholders numbered (see `numbered`), when the caller has it already.
 */
export async function execute(
  db: Queryable,
  statement: Statement,
  text = numbered(statement.sql),
): Promise<unknown> {
  if (statement.wants === 'script') {
    await db.query(statement.sql);
    return undefined;
  }
  const result = await db.query(text, statement.params as unknown[]);
  return statement.wants === 'rows' ? result.rows : (result.rowCount ?? 0);
}

/**
 * `sql` with each `?` outside a quoted string or identifier numbered `$1`, `$2`… in order. The shared
 * stores never use PostgreSQL's jsonb `?` operators, so every such `?` is a placeholder.
 */
export function numbered(sql: string): string {
  let out = '';
  let count = 0;
  let quote: string | undefined;
  for (const char of sql) {
    if (quote) {
      if (char === quote) quote = undefined;
    } else if (char === "'" || char === '"') quote = char;
    else if (char === '?') {
      out += `$${++count}`;
      continue;
    }
    out += char;
  }
  return out;
}

/** Runs `work` in one transaction on one connection: committed when it resolves, rolled back when it throws. */
export async function transaction<T>(db: Database, work: (connection: Connection) => Promise<T>): Promise<T> {
  const connection = await db.connect();
  try {
    await connection.query('BEGIN');
    const result = await work(connection);
    await connection.query('COMMIT');
    return result;
  } catch (error) {
    await connection.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    connection.release();
  }
}

/** Builds a statement's `$n` placeholders as values are added, so a condition list can grow freely. */
export class Params {
  readonly values: unknown[] = [];

  /** The placeholder for `value`. */
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  /** Placeholders for each of `values`, comma-separated. */
  list(values: readonly unknown[]): string {
    return values.map((value) => this.add(value)).join(', ');
  }
}
