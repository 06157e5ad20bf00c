import type { JobQueue } from '../job-queue.ts';
import { SqlRunStore } from '../sql/run-store.ts';
import type { RunStore } from '../store.ts';
import { type Database, endSessionsOfDeadProcesses } from './database.ts';
import type { EventWriter } from './event-writer.ts';
import type { Notifications } from './notifications.ts';
import { interruptTrees, markInterruptedRuns } from './run-maintenance.ts';
import { PostgresSqlDatabase } from './sql-port.ts';
import { orphanedJobs } from './worker-leases.ts';

/**
 * The PostgreSQL run store: the shared one (sql/run-store.ts) recording through the event writer (see
 * event-writer.ts); stores of events and stop requests are announced with NOTIFY, and the sweep of
 * interrupted runs also reaps the jobs of workers that are gone.
 */
export class PostgresRunStore extends SqlRunStore implements RunStore {
  readonly #db: Database;
  readonly #writer: EventWriter;
  readonly #notifications: Notifications;
  /** The queue, opened only when a gone worker's jobs are to be reaped (set by the store). */
  reapWith: (() => Promise<JobQueue>) | undefined;

  constructor(db: Database, writer: EventWriter, notifications: Notifications) {
    super(new PostgresSqlDatabase(db), {
      record: (event) => writer.enqueueEvent(event),
      // Before a model request: what was recorded so far is committed, so it survives this process.
      secure: () => writer.flush(),
      flush: () => writer.flush(),
      beforeRemoving: () => {},
      // Workers running parts of the tree stop them when told; the row stays for jobs not yet started.
      stopAsked: (runId, reason, alone) =>
        notifications.notify(
          db,
          'stop',
          JSON.stringify(alone ? { run: runId, reason, alone: true } : { root: runId, reason }),
        ),
      // Heard on the same channel: whoever runs the run takes what was left for it.
      messageSent: (runId) => notifications.notify(db, 'stop', JSON.stringify({ message: runId })),
    });
    this.#db = db;
    this.#writer = writer;
    this.#notifications = notifications;
  }

  /** Calls `onChange` whenever any process stores events of the tree (and after a lost connection). */
  watch(rootRunId: string, onChange: () => void): Promise<() => void> {
    return this.#notifications.listen('events', (root) => {
      if (root === rootRunId || root === '*') onChange();
    });
  }

  watchStops(onRequest: () => void): () => void {
    let unlisten: (() => void) | undefined;
    let ended = false;
    // After a lost connection the listener hears `*`: whatever was asked meanwhile is looked for then.
    void this.#notifications
      .listen('stop', () => onRequest())
      .then((stop) => {
        if (ended) return stop();
        unlisten = stop;
        onRequest();
      })
      .catch(() => {});
    return () => {
      ended = true;
      unlisten?.();
    };
  }

  async markInterrupted(): Promise<string[]> {
    await this.flush();
    await endSessionsOfDeadProcesses(this.#db);
    const marked = await markInterruptedRuns(this.sql, this.#writer);
    // Runs as jobs: a worker that is gone (its lease let go) left jobs. Each goes back on the queue when a
    // live worker can take it; else its tree is closed `interrupted` here, for a person to resume.
    if (!this.reapWith || !(await orphanedJobs(this.#db)).length) return marked;
    const { givenUp } = await (await this.reapWith()).reap();
    if (!givenUp.length) return marked;
    marked.push(...(await interruptTrees(this.sql, this.#writer, givenUp)));
    // A part of the tree still running on a live worker (a sub-agent) has no parent to answer any more.
    for (const rootRunId of new Set(givenUp.map((job) => job.rootRunId)))
      await this.#notifications.notify(
        this.#db,
        'stop',
        JSON.stringify({ root: rootRunId, reason: 'its tree was interrupted' }),
      );
    return marked;
  }
}
