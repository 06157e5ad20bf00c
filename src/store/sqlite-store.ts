import { type Database, openDatabase } from './database.ts';
import { SqliteDocumentStore } from './documents/document-store.ts';
import type { EventWriterOptions } from './event-writer.ts';
import { SqliteHttpCache } from './http-cache.ts';
import { SqliteJournalStore } from './journal-store.ts';
import { SqliteResultMemory } from './result-memory-store.ts';
import { SqliteRunStore } from './run-store.ts';
import { SqliteSessionStore } from './session-store.ts';
import { SqliteSettingsStore } from './settings-store.ts';
import type { Store } from './store.ts';
import { SqliteUserStore } from './user-store.ts';

export interface SqliteStoreOptions {
  /** How events are written (batching delay, slice length, payload threshold). */
  events?: EventWriterOptions;
}

/** The embedded store: every concern over one SQLite file (or `:memory:`), WAL mode, migrated on open. */
export class SqliteStore implements Store {
  readonly runs: SqliteRunStore;
  readonly sessions: SqliteSessionStore;
  readonly documents: SqliteDocumentStore;
  readonly settings: SqliteSettingsStore;
  readonly httpCache: SqliteHttpCache;
  readonly users: SqliteUserStore;
  readonly results: SqliteResultMemory;
  readonly journal: SqliteJournalStore;
  /** The open database, for this room's own tests and benchmarks; nothing outside `store/` uses it. */
  readonly database: Database;
  #closed = false;

  constructor(database: Database, options: SqliteStoreOptions = {}) {
    this.database = database;
    this.runs = new SqliteRunStore(database, options.events);
    this.sessions = new SqliteSessionStore(database);
    this.documents = new SqliteDocumentStore(database);
    this.settings = new SqliteSettingsStore(database);
    this.httpCache = new SqliteHttpCache(database);
    this.users = new SqliteUserStore(database);
    this.results = new SqliteResultMemory(database);
    this.journal = new SqliteJournalStore(database);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.runs.close();
    this.database.close();
  }
}

/** Opens (creating and migrating if needed) the store at `path`; `:memory:` for a private one. */
export function openSqliteStore(path: string, options: SqliteStoreOptions = {}): SqliteStore {
  return new SqliteStore(openDatabase(path), options);
}
