import { SystemError } from '../../core/errors.ts';
import { changes, rows, type SqlDatabase, script, type Transaction } from './sql-database.ts';

/** One schema change of a backend: applied once, in its list's order, and recorded by id. */
export interface Migration {
  id: string;
  sql: string;
}

/**
 * Applies every migration of `list` not yet recorded in the `migrations` table, in order, inside the
 * caller's transaction (which each backend makes exclusive its own way: SQLite's write lock, a PostgreSQL
 * advisory lock), so several processes opening a fresh database at once apply each exactly once.
 * `timeType` is the column type the table records times in (the same as each backend's other tables).
 */
export function* applyMigrations(
  list: readonly Migration[],
  timeType: 'INTEGER' | 'BIGINT',
): Transaction<void> {
  yield* script(
    `CREATE TABLE IF NOT EXISTS migrations (id TEXT PRIMARY KEY, applied_at ${timeType} NOT NULL)`,
  );
  const applied = new Set((yield* rows<{ id: string }>('SELECT id FROM migrations')).map((row) => row.id));
  for (const migration of list) {
    if (applied.has(migration.id)) continue;
    try {
      yield* script(migration.sql);
    } catch (error) {
      throw new SystemError(
        'migration_failed',
        `migration ${migration.id} failed: ${(error as Error).message}`,
        { migration: migration.id },
        error,
      );
    }
    yield* changes('INSERT INTO migrations (id, applied_at) VALUES (?, ?)', [migration.id, Date.now()]);
  }
}

/** Where a database stands against the migrations this code knows. */
export interface MigrationState {
  /** Known migrations the database has not applied (a process started before they were). */
  pending: string[];
  /** Applied migrations this code does not know: the database was migrated by a newer Cadre. */
  unknown: string[];
  /** Every applied migration with when it was applied (ms since the epoch), in id order. */
  applied: Array<{ id: string; appliedAt: number }>;
}

/** Compares the database's applied migrations with `list`, reading only. */
export async function migrationState(sql: SqlDatabase, list: readonly Migration[]): Promise<MigrationState> {
  const rows = await sql.all<{ id: string; applied_at: number | string }>(
    'SELECT id, applied_at FROM migrations ORDER BY id',
  );
  const applied = new Set(rows.map((row) => row.id));
  const known = new Set(list.map((migration) => migration.id));
  return {
    pending: list.filter((migration) => !applied.has(migration.id)).map((migration) => migration.id),
    unknown: [...applied].filter((id) => !known.has(id)).sort(),
    applied: rows.map((row) => ({ id: row.id, appliedAt: Number(row.applied_at) })),
  };
}
