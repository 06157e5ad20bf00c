import { describe, expect, it } from 'vitest';
import { freshSchema, TEST_DATABASE_URL } from '../../../test/helpers/postgres.ts';
import { openDatabase as openPostgres } from '../postgres/database.ts';
import { PostgresSqlDatabase } from '../postgres/sql-port.ts';
import { openDatabase as openSqlite } from '../sqlite/database.ts';
import { SqliteSqlDatabase } from '../sqlite/sql-port.ts';
import { changes, row, type SqlDatabase } from './sql-database.ts';

// The SQL port's own contract, over both adapters: the stores in this folder rely on each of these.

function describePort(backend: string, open: () => Promise<{ sql: SqlDatabase; close(): Promise<void> }>) {
  describe(`the SQL port: ${backend}`, () => {
    it('numbers ? placeholders in order, leaving a ? inside a quoted string alone', async () => {
      const { sql, close } = await open();
      expect(
        await sql.one<{ mark: string; first: string; second: string }>(
          `SELECT '?' AS mark, CAST(? AS TEXT) AS first, CAST(? AS TEXT) AS second`,
          ['a', 'b'],
        ),
      ).toEqual({ mark: '?', first: 'a', second: 'b' });
      await close();
    });

    it('commits a transaction when its body returns, and nothing of it when its body throws', async () => {
      const { sql, close } = await open();
      const id = await sql.transaction(function* () {
        yield* changes('INSERT INTO settings (scope, key, value) VALUES (?, ?, ?)', ['s', 'kept', '1']);
        return (yield* row<{ key: string }>('SELECT key FROM settings WHERE scope = ?', ['s']))?.key;
      });
      expect(id).toBe('kept');
      const refused = new Error('refused half-way');
      await expect(
        sql.transaction(function* () {
          yield* changes('INSERT INTO settings (scope, key, value) VALUES (?, ?, ?)', ['s', 'dropped', '1']);
          throw refused;
        }),
      ).rejects.toBe(refused);
      await expect(
        sql.transaction(function* () {
          yield* changes('INSERT INTO settings (scope, key, value) VALUES (?, ?, ?)', ['s', 'dropped', '1']);
          yield* changes('INSERT INTO no_such_table (x) VALUES (?)', [1]);
        }),
      ).rejects.toThrow(/no_such_table/);
      expect(await sql.all('SELECT key FROM settings WHERE scope = ? ORDER BY key', ['s'])).toEqual([
        { key: 'kept' },
      ]);
      expect(await sql.run('DELETE FROM settings WHERE scope = ?', ['s'])).toBe(1);
      await close();
    });
  });
}

describePort('SQLite', async () => {
  const db = openSqlite(':memory:');
  return { sql: new SqliteSqlDatabase(db), close: async () => db.close() };
});

describe('the SQL port on SQLite', () => {
  it('runs a transaction to its end before any other code of the process runs', async () => {
    const db = openSqlite(':memory:');
    const sql = new SqliteSqlDatabase(db);
    const done = sql.transaction(function* () {
      yield* changes('INSERT INTO settings (scope, key, value) VALUES (?, ?, ?)', ['s', 'a', '1']);
      yield* changes('INSERT INTO settings (scope, key, value) VALUES (?, ?, ?)', ['s', 'b', '1']);
    });
    // Already committed when the call returns: no other statement (an event writer's slice) can land in it.
    expect(db.isTransaction).toBe(false);
    expect(db.prepare('SELECT count(*) AS n FROM settings').get()).toEqual({ n: 2 });
    await done;
    db.close();
  });
});

if (TEST_DATABASE_URL) {
  describePort('PostgreSQL', async () => {
    const pool = await openPostgres(await freshSchema('cadre_port'));
    return { sql: new PostgresSqlDatabase(pool), close: () => pool.end() };
  });
} else {
  describe('the SQL port: PostgreSQL', () => {
    it.skip('runs when CADRE_TEST_DATABASE_URL names a database', () => {});
  });
}
