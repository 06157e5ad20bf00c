import { currentOwner } from '../run-owner.ts';
import { SqlHttpCache } from '../sql/http-cache.ts';
import { SqlJournalStore } from '../sql/journal-store.ts';
import { type MigrationState, migrationState } from '../sql/migrations.ts';
import { SqlResultMemory } from '../sql/result-memory.ts';
import { SqlSessionStore } from '../sql/session-store.ts';
import { SqlSettingsStore } from '../sql/settings-store.ts';
import { SqlUserRows } from '../sql/user-rows.ts';
import type { Store } from '../store.ts';
import { TokenUserStore } from '../token-users.ts';
import { Checkpointer } from './checkpointer.ts';
import { type Database, openDatabase } from './database.ts';
import { SqliteDocumentStore } from './documents/document-store.ts';
import { EventWriter, type EventWriterOptions } from './event-writer.ts';
import { FileSignal } from './file-signal.ts';
import { sqliteJournalWriting } from './journal-store.ts';
import { MIGRATIONS } from './migrations/index.ts';
import { recoverDeadSpools } from './run-maintenance.ts';
import { SqliteRunStore } from './run-store.ts';
import { Spool, spoolDirFor } from './spool.ts';
import { SqliteSqlDatabase } from './sql-port.ts';

export interface SqliteStoreOptions {
  /** How events are written (batching delay, slice length, payload threshold). */
  events?: Omit<EventWriterOptions, 'spool' | 'onFirstWrite'>;
  /**
   * Background checkpoints (see checkpointer.ts): how long after the first write the worker may start
   * (default 1,000 ms), the WAL size it waits for (default 1 MiB) and how often it checkpoints (500 ms);
   * `now`, the clock the delay is measured on (a test's own).
   */
  checkpoints?: { delayMs?: number; minWalBytes?: number; intervalMs?: number; now?: () => number };
}

/**
 * The embedded store: every concern over one SQLite file (or `:memory:`), WAL mode, migrated on open.
 * For a file, runs' events and journal entries are secured in this process's spool before SQLite has
 * them (see event-writer.ts), checkpoints happen on a worker thread once runs are written, and opening
 * applies what dead processes left in their spools.
 */
export class SqliteStore implements Store {
  readonly runs: SqliteRunStore;
  readonly sessions: SqlSessionStore;
  readonly documents: SqliteDocumentStore;
  readonly settings: SqlSettingsStore;
  readonly httpCache: SqlHttpCache;
  readonly users: TokenUserStore;
  readonly results: SqlResultMemory;
  readonly journal: SqlJournalStore;
  /** The open database, for this room's own tests and benchmarks; nothing outside `store/` uses it. */
  readonly database: Database;
  #checkpointer: Checkpointer | undefined;
  #closed = false;
  #sql: SqliteSqlDatabase;

  constructor(database: Database, options: SqliteStoreOptions = {}) {
    this.database = database;
    const sql = new SqliteSqlDatabase(database);
    this.#sql = sql;
    const location = database.location();
    const owner = options.events?.owner ?? currentOwner();
    // What processes that died left in their spools, applied at open and again before a long-lived
    // process (`cadre serve`) resumes or removes one of their trees.
    const recover = () => {
      if (location) recoverDeadSpools(database, { owner });
    };
    recover();
    if (location) {
      this.#checkpointer = new Checkpointer(database, location, options.checkpoints);
    }
    // Chat lists (a session written, a tree started or ended), told across processes by `cadre.db-lists`.
    const lists = new FileSignal(location ?? undefined, 'lists');
    const writer = new EventWriter(database, {
      ...options.events,
      ...(location ? { spool: new Spool(spoolDirFor(location), owner) } : {}),
      onFirstWrite: () => this.#checkpointer?.start(),
      onRootChange: () => lists.announce(),
      onWritten: () => this.#checkpointer?.written(),
    });
    this.runs = new SqliteRunStore(database, writer, recover, lists);
    this.sessions = new SqlSessionStore(sql, lists);
    this.documents = new SqliteDocumentStore(database);
    this.settings = new SqlSettingsStore(sql);
    this.httpCache = new SqlHttpCache(sql);
    this.users = new TokenUserStore(new SqlUserRows(sql));
    this.results = new SqlResultMemory(sql);
    this.journal = new SqlJournalStore(sql, sqliteJournalWriting(writer, recover));
  }

  /** True while a worker thread checkpoints this store's WAL (see checkpointer.ts). */
  get checkpointsInBackground(): boolean {
    return this.#checkpointer?.running ?? false;
  }

  health(): Promise<MigrationState> {
    return migrationState(this.#sql, MIGRATIONS);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.runs.close();
    await this.#checkpointer?.stop();
    this.database.close();
  }
}

/** Opens (creating and migrating if needed) the store at `path`; `:memory:` for a private one. */
export function openSqliteStore(path: string, options: SqliteStoreOptions = {}): SqliteStore {
  return new SqliteStore(openDatabase(path), options);
}
