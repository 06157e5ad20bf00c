import type { CadreEvent } from '../../core/events.ts';
import type { ChangeSignal } from '../sql/change-signal.ts';
import { SqlRunStore } from '../sql/run-store.ts';
import type { RunStore } from '../store.ts';
import type { Database } from './database.ts';
import { EventWriter, type EventWriterOptions } from './event-writer.ts';
import { onFileChange } from './file-changes.ts';
import { FileSignal } from './file-signal.ts';
import { markInterruptedRuns } from './run-maintenance.ts';
import { SqliteSqlDatabase } from './sql-port.ts';

/**
 * The SQLite run store: the shared one (sql/run-store.ts) recording through the event writer, which
 * commits in small, time-boxed transactions off the run's hot path (see event-writer.ts); stops are
 * announced to other processes on the same file through `cadre.db-stops` (file-signal.ts).
 */
export class SqliteRunStore extends SqlRunStore implements RunStore {
  readonly #db: Database;
  readonly #writer: EventWriter;
  readonly #stops: FileSignal;
  readonly #lists: ChangeSignal | undefined;
  /**
   * Wakes a follower in another process when the file is written (its WAL changes: the operating system
   * says so), instead of it reading every 150 ms. Any write wakes it, and it reads on from its cursor. A
   * database in memory has no other process to hear, and no watch.
   */
  readonly watch?: (rootRunId: string, onChange: () => void) => Promise<() => void>;

  /**
   * Writes through `writer` (shared with the journal) or a writer of its own made with these options.
   * `recoverDeadSpools` applies dead processes' spools, so a tree one of them left there is removed
   * whole instead of coming back when its spool is applied later.
   */
  constructor(
    db: Database,
    writer: EventWriter | EventWriterOptions = {},
    recoverDeadSpools = () => {},
    lists?: ChangeSignal,
  ) {
    const events = writer instanceof EventWriter ? writer : new EventWriter(db, writer);
    const stops = new FileSignal(db.location() ?? undefined, 'stops');
    super(new SqliteSqlDatabase(db), {
      record: (event) => events.enqueue(event),
      secure: () => events.secure(),
      flush: () => events.flush(),
      beforeRemoving: recoverDeadSpools,
      stopAsked: () => stops.announce(),
      messageSent: () => stops.announce(),
    });
    this.#db = db;
    this.#writer = events;
    this.#stops = stops;
    this.#lists = lists;
    const location = db.location();
    if (location) this.watch = async (_rootRunId, onChange) => onFileChange(`${location}-wal`, onChange);
  }

  /** The hot path (every event of every run): straight to the writer's queue. */
  override record(event: CadreEvent): void {
    this.#writer.enqueue(event);
  }

  /** The writer's longest stalls of the event loop so far. */
  get writerStats(): EventWriter['stats'] {
    return this.#writer.stats;
  }

  /** Called when a background write fails (a full disk, a locked file). */
  set onWriteError(handler: (error: unknown) => void) {
    this.#writer.onWriteError = handler;
  }

  watchStops(onRequest: () => void): () => void {
    return this.#stops.watch(onRequest);
  }

  async markInterrupted(): Promise<string[]> {
    const marked = await markInterruptedRuns(this.#db);
    // Their sessions stop answering.
    if (marked.length) this.#lists?.announce();
    return marked;
  }

  /** Writes what is pending and stops the writer. */
  close(): Promise<void> {
    return this.#writer.close();
  }
}
