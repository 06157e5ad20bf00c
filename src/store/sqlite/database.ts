import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { SystemError } from '../../core/errors.ts';
import { applyMigrations } from '../sql/migrations.ts';
import { runTransaction, type Statement } from '../sql/sql-database.ts';
import { MIGRATIONS } from './migrations/index.ts';

export type Database = DatabaseSync;

/** How long a statement waits for another process's write lock before failing with "database is locked". */
const BUSY_TIMEOUT_MS = 5_000;

/**
 * Opens (creating if needed) Cadre's SQLite file in WAL mode and brings its schema up to date. `:memory:`
 * gives a private in-memory database, which is what most tests use.
 */
export function openDatabase(path: string): Database {
  if (path !== ':memory:') privateFiles(path);
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(path);
    // The wait comes first: switching a fresh file to WAL takes a lock that another process opening the
    // same folder at the same moment may hold.
    db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    switchToWal(db);
  } catch (error) {
    throw unusableDatabase(path, error);
  }
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec('PRAGMA foreign_keys = ON');
  migrate(db);
  return db;
}

/**
 * The database holds every user's messages and documents: its folder is 0700 and the file 0600 before
 * SQLite opens it, so the `-wal` and `-shm` files it makes take the same mode (SQLite gives them the
 * database file's); files an older Cadre made 0644 are narrowed too.
 */
function privateFiles(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  closeSync(openSync(path, 'a', 0o600));
  for (const [file, mode] of [
    [dirname(path), 0o700],
    [path, 0o600],
    [`${path}-wal`, 0o600],
    [`${path}-shm`, 0o600],
  ] as const) {
    try {
      chmodSync(file, mode);
    } catch {
      // -wal and -shm exist only while a connection has them open.
    }
  }
}

/**
 * Sets WAL mode, retrying while another process holds the lock. SQLite does not always call the busy
 * handler for a journal-mode change (seen: "database is locked" at once when six processes open a fresh
 * folder together), so the wait is done here, briefly and only at start-up.
 */
function switchToWal(db: DatabaseSync): void {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
    try {
      db.exec('PRAGMA journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { errcode?: number }).errcode !== SQLITE_BUSY || Date.now() + pause > deadline)
        throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, pause);
    }
  }
}

const SQLITE_BUSY = 5;

/** The error for a file SQLite cannot open as a database: which file, and what the person can do. */
function unusableDatabase(path: string, error: unknown): SystemError {
  const reason = (error as Error).message;
  return new SystemError(
    'database_unusable',
    `${path} cannot be opened as Cadre's database (${reason}). If it is damaged, move it aside ` +
      `(mv "${path}" "${path}.broken") and Cadre starts a new one; or set CADRE_HOME to another folder.`,
    { file: path },
    error,
  );
}

/**
 * Applies every migration not yet recorded, in list order, in one write transaction (sql/migrations.ts).
 * `BEGIN IMMEDIATE` takes the write lock before the check of what is applied, so several processes
 * opening a fresh folder at once apply each migration exactly once: the others wait, then find nothing
 * left to do. An up-to-date database is recognised without taking the write lock.
 */
export function migrate(db: Database): void {
  if (pendingMigrations(db).length === 0) return;
  transaction(db, () =>
    runTransaction(applyMigrations(MIGRATIONS, 'INTEGER'), (statement) =>
      execute(db, statement, (sql) => db.prepare(sql)),
    ),
  );
}

/** A value node:sqlite binds to a placeholder. */
export type SqliteValue = null | number | bigint | string | NodeJS.ArrayBufferView;

/**
 * Runs one statement of a transaction (sql/sql-database.ts) on `db`, prepared by `prepare` (which may
 * keep prepared statements): its rows, how many rows it changed, or nothing for a script.
 */
export function execute(
  db: Database,
  statement: Statement,
  prepare: (sql: string) => StatementSync,
): unknown {
  if (statement.wants === 'script') {
    db.exec(statement.sql);
    return undefined;
  }
  const prepared = prepare(statement.sql);
  const values = statement.params as SqliteValue[];
  return statement.wants === 'rows' ? prepared.all(...values) : Number(prepared.run(...values).changes);
}

function pendingMigrations(db: Database) {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'migrations'").get();
  if (!table) return MIGRATIONS;
  const applied = new Set(
    (db.prepare('SELECT id FROM migrations').all() as Array<{ id: string }>).map((row) => row.id),
  );
  return MIGRATIONS.filter((migration) => !applied.has(migration.id));
}

/**
 * Runs `work` in one write transaction. IMMEDIATE: the write lock is taken (waiting for another process's
 * commit) before the first read, so what `work` reads cannot change before it writes, and it never fails
 * half-way upgrading a read snapshot another process moved past.
 */
export function transaction<T>(db: Database, work: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = work();
    db.exec('COMMIT');
    return result;
  } catch (error) {
    db.exec('ROLLBACK');
    throw error;
  }
}
