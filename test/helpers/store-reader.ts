import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { testModeDatabase } from './cli.ts';

/**
 * Reads, with SQL, the store `cadre` processes of one CADRE_HOME write: `cadre.db` embedded, or that home's
 * PostgreSQL schema in the PostgreSQL test mode. The tables and columns these tests read are named alike on
 * both; what only one engine has (SQLite's integrity check, its spool) is for the caller to ask about.
 */
export interface StoreReader {
  readonly engine: 'sqlite' | 'postgres';
  /** The rows of `sql`, or none while the store does not exist yet (or the table is not made yet). */
  rows<Row = Record<string, unknown>>(sql: string): Promise<Row[]>;
  /** `SELECT COUNT(*) AS n …` as a number (0 while there is no such table). */
  count(sql: string): Promise<number>;
  /** Changes the store behind Cadre's back (to make the state a kill leaves, say). */
  execute(sql: string): Promise<void>;
  close(): Promise<void>;
}

export function storeReader(env: Record<string, string>): StoreReader {
  const url = testModeDatabase(env).CADRE_DATABASE_URL ?? env.CADRE_DATABASE_URL;
  return url ? postgresReader(url) : sqliteReader(join(env.CADRE_HOME!, 'cadre.db'));
}

function sqliteReader(path: string): StoreReader {
  let db: DatabaseSync | undefined;
  const reader: StoreReader = {
    engine: 'sqlite',
    async rows<Row>(sql: string) {
      if (!db && existsSync(path)) db = new DatabaseSync(path, { readOnly: true });
      if (!db) return [];
      try {
        return db.prepare(sql).all() as Row[];
      } catch {
        return []; // the table may not exist yet
      }
    },
    async count(sql) {
      const [row] = await reader.rows<{ n: number }>(sql);
      return Number(row?.n ?? 0);
    },
    async execute(sql) {
      const writable = new DatabaseSync(path);
      try {
        writable.exec(sql);
      } finally {
        writable.close();
      }
    },
    async close() {
      db?.close();
      db = undefined;
    },
  };
  return reader;
}

function postgresReader(url: string): StoreReader {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  pool.on('error', () => {});
  const reader: StoreReader = {
    engine: 'postgres',
    async rows<Row>(sql: string) {
      try {
        return (await pool.query(sql)).rows as Row[];
      } catch {
        return []; // the tables may not be made yet
      }
    },
    async count(sql) {
      const [row] = await reader.rows<{ n: string | number }>(sql);
      return Number(row?.n ?? 0);
    },
    async execute(sql) {
      await pool.query(sql);
    },
    close: () => pool.end(),
  };
  return reader;
}
