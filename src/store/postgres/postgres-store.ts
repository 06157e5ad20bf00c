import type { JobQueue } from '../job-queue.ts';
import { SqlHttpCache } from '../sql/http-cache.ts';
import { SqlJournalStore } from '../sql/journal-store.ts';
import { type MigrationState, migrationState } from '../sql/migrations.ts';
import { SqlResultMemory } from '../sql/result-memory.ts';
import { SqlSessionStore } from '../sql/session-store.ts';
import { SqlSettingsStore } from '../sql/settings-store.ts';
import { SqlUserRows } from '../sql/user-rows.ts';
import type { Store } from '../store.ts';
import { TokenUserStore } from '../token-users.ts';
import { type Database, openDatabase } from './database.ts';
import { PostgresDocumentStore } from './documents/document-store.ts';
import { EventWriter } from './event-writer.ts';
import { PgBossJobQueue } from './job-queue.ts';
import { postgresJournalWriting } from './journal-store.ts';
import { MIGRATIONS } from './migrations.ts';
import { Notifications, NotifySignal } from './notifications.ts';
import { PostgresRunStore } from './run-store.ts';
import { PostgresSqlDatabase } from './sql-port.ts';

/**
 * Every store concern in one PostgreSQL database (`CADRE_DATABASE_URL`), for more than one process or
 * machine: the same interfaces and the same contract suite as the embedded SQLite store.
 */
export class PostgresStore implements Store {
  readonly runs: PostgresRunStore;
  readonly sessions: SqlSessionStore;
  readonly documents: PostgresDocumentStore;
  readonly settings: SqlSettingsStore;
  readonly httpCache: SqlHttpCache;
  readonly users: TokenUserStore;
  readonly results: SqlResultMemory;
  readonly journal: SqlJournalStore;
  /** The connection pool, for this room's own tests; nothing outside `store/` uses it. */
  readonly database: Database;
  /** LISTEN/NOTIFY for this process: events stored, jobs waiting, stops. */
  readonly notifications: Notifications;
  #writer: EventWriter;
  #closed = false;
  #url: string;
  #schema: string;
  #jobs: Promise<PgBossJobQueue> | undefined;
  #sql: PostgresSqlDatabase;

  constructor(database: Database, url: string, schema: string) {
    this.database = database;
    const sql = new PostgresSqlDatabase(database);
    this.#sql = sql;
    this.#url = url;
    this.#schema = schema;
    this.notifications = new Notifications(url, schema);
    this.#writer = new EventWriter(database);
    this.#writer.eventsChannel = this.notifications.channel('events');
    this.#writer.listsChannel = this.notifications.channel('lists');
    this.runs = new PostgresRunStore(database, this.#writer, this.notifications);
    this.runs.reapWith = () => this.jobs();
    // Chat lists (a session written, a tree started or ended), told across processes by NOTIFY `lists`.
    this.sessions = new SqlSessionStore(sql, new NotifySignal(database, this.notifications, 'lists'));
    this.documents = new PostgresDocumentStore(database);
    this.settings = new SqlSettingsStore(sql);
    this.httpCache = new SqlHttpCache(sql);
    this.users = new TokenUserStore(new SqlUserRows(sql));
    this.results = new SqlResultMemory(sql);
    this.journal = new SqlJournalStore(sql, postgresJournalWriting(this.#writer));
  }

  /** Called when a batch of events cannot be written (the database gone for longer than the retries). */
  set onWriteError(handler: (error: unknown) => void) {
    this.#writer.onWriteError = handler;
  }

  /** The queue of runs as jobs (pg-boss in a schema beside Cadre's), started on first use. */
  jobs(): Promise<JobQueue> {
    this.#writer.recordRunsAsJobs();
    this.#jobs ??= PgBossJobQueue.open(this.#url, this.database, this.notifications, this.#schema);
    return this.#jobs;
  }

  health(): Promise<MigrationState> {
    return migrationState(this.#sql, MIGRATIONS);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#writer.close();
    const jobs = await this.#jobs?.catch(() => undefined);
    await jobs?.close();
    await this.notifications.close();
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
  const database = await openDatabase(url, options);
  const { rows } = await database.query<{ schema: string }>('SELECT current_schema() AS schema');
  const schema = options.schema ?? rows[0]?.schema ?? 'public';
  return new PostgresStore(database, options.schema ? withSearchPath(url, options.schema) : url, schema);
}

/** The URL with `schema` as its search path, for connections other than the pool (pg-boss, LISTEN). */
function withSearchPath(url: string, schema: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('options', `-c search_path=${schema}`);
  return parsed.toString();
}
