import type { Store } from '../store.ts';
import { TokenUserStore } from '../token-users.ts';
import { type Database, openDatabase } from './database.ts';
import { PostgresDocumentStore } from './documents/document-store.ts';
import { EventWriter } from './event-writer.ts';
import { PostgresHttpCache } from './http-cache.ts';
import { PostgresJournalStore } from './journal-store.ts';
import { PostgresResultMemory } from './result-memory-store.ts';
import { PostgresRunStore } from './run-store.ts';
import { PostgresSessionStore } from './session-store.ts';
import { PostgresSettingsStore } from './settings-store.ts';
import { PostgresUserRows } from './user-store.ts';

/**
 * Every store concern in one PostgreSQL database (`CADRE_DATABASE_URL`), for more than one process or
 * machine: the same interfaces and the same contract suite as the embedded SQLite store.
 */
export class PostgresStore implements Store {
  readonly runs: PostgresRunStore;
  readonly sessions: PostgresSessionStore;
  readonly documents: PostgresDocumentStore;
  readonly settings: PostgresSettingsStore;
  readonly httpCache: PostgresHttpCache;
  readonly users: TokenUserStore;
  readonly results: PostgresResultMemory;
  readonly journal: PostgresJournalStore;
  /** The connection pool, for this room's own tests; nothing outside `store/` uses it. */
  readonly database: Database;
  #writer: EventWriter;
  #closed = false;

  constructor(database: Database) {
    this.database = database;
    this.#writer = new EventWriter(database);
    this.runs = new PostgresRunStore(database, this.#writer);
    this.sessions = new PostgresSessionStore(database);
    this.documents = new PostgresDocumentStore(database);
    this.settings = new PostgresSettingsStore(database);
    this.httpCache = new PostgresHttpCache(database);
    this.users = new TokenUserStore(new PostgresUserRows(database));
    this.results = new PostgresResultMemory(database);
    this.journal = new PostgresJournalStore(database, this.#writer);
  }

  /** Called when a batch of events cannot be written (the database gone for longer than the retries). */
  set onWriteError(handler: (error: unknown) => void) {
    this.#writer.onWriteError = handler;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#writer.close();
    await this.database.end();
  }
}

/**
 * Connects to the database at `url` (creating Cadre's tables when missing). `schema` keeps them in a
 * PostgreSQL schema of their own, created when missing.
 */
export async function openPostgresStore(
  url: string,
  options: { schema?: string } = {},
): Promise<PostgresStore> {
  return new PostgresStore(await openDatabase(url, options));
}
