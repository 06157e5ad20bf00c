import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Connection, Database, Queryable } from './database.ts';

/**
 * A worker is alive while it holds its lease: a session advisory lock on a connection of its own. The
 * database lets go of it the moment that connection ends, so a worker killed on any machine is known
 * dead at once, where pg-boss's heartbeat would take its full window to say so.
 */
const LEASE_CLASS = 'cadre-worker';

/** SQL true while the worker whose id is `column` holds its lease (in this database). */
export function leaseHeld(column: string): string {
  return `EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND l.classid = hashtext('${LEASE_CLASS}')::oid AND l.objid = hashtext(${column})::oid)`;
}

/**
 * A database that restarted has lost every lease at once: workers enlisted before the restart are
 * reconnecting to take theirs again, and none of them is judged gone until this long after it.
 */
const RESTART_GRACE_SECONDS = 15;

/** SQL true when the worker of row `w` (or none, gone with its row) may be judged by its lease now. */
const JUDGED = `(w.started_at IS NULL
  OR w.started_at > (extract(epoch FROM pg_postmaster_start_time()) * 1000)::bigint
  OR pg_postmaster_start_time() < now() - interval '${RESTART_GRACE_SECONDS} seconds')`;

/** The database's clock, in ms (workers on other machines may not agree with this one's). */
const NOW_MS = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint';

/** A job a worker that is gone still held. */
export interface OrphanedJob {
  jobId: string;
  kind: string;
  retryCount: number;
  workerId: string;
  /** The gone worker's process (0 and its id when its row is gone too). */
  pid: number;
  host: string;
  rootRunId: string;
  runId: string;
  /** Whether a live worker is there to take it again (any process working the queue). */
  takeable: boolean;
}

/** The jobs whose worker is gone (none within the grace after a database restart). */
export async function orphanedJobs(db: Queryable): Promise<OrphanedJob[]> {
  const { rows } = await db.query<{
    job_id: string;
    kind: string;
    retry_count: number;
    worker_id: string;
    pid: number | null;
    host: string | null;
    root_id: string;
    run_id: string;
    takeable: boolean;
  }>(
    `SELECT h.job_id, h.kind, h.retry_count, h.worker_id, w.pid, w.host, h.root_id, h.run_id,
       EXISTS (SELECT 1 FROM workers s WHERE s.id <> h.worker_id AND ${leaseHeld('s.id')}) AS takeable
     FROM job_holders h LEFT JOIN workers w ON w.id = h.worker_id
     WHERE NOT ${leaseHeld('h.worker_id')} AND ${JUDGED}`,
  );
  return rows.map((row) => ({
    jobId: row.job_id,
    kind: row.kind,
    retryCount: row.retry_count,
    workerId: row.worker_id,
    pid: row.pid ?? 0,
    host: row.host ?? row.worker_id,
    rootRunId: row.root_id,
    runId: row.run_id,
    takeable: row.takeable,
  }));
}

/** Forgets workers that are gone and hold nothing any more. */
export async function forgetGoneWorkers(db: Queryable): Promise<void> {
  await db.query(
    `DELETE FROM workers w WHERE NOT ${leaseHeld('w.id')}
       AND NOT EXISTS (SELECT 1 FROM job_holders h WHERE h.worker_id = w.id) AND ${JUDGED}`,
  );
}

/** Who takes a lease: the worker's name, whether it stays, and its slots. */
export interface LeaseHolder {
  name: string;
  standing: boolean;
  concurrency?: number | undefined;
}

/**
 * The lease of one worker of this process, held until `release`. When its connection is lost (the
 * database restarted), it is taken again as soon as the database answers.
 */
export class WorkerLease {
  readonly id = randomUUID();
  #db: Database;
  #connection: Connection | undefined;
  #released = false;
  #retry: NodeJS.Timeout | undefined;

  #worker: LeaseHolder;

  private constructor(db: Database, worker: LeaseHolder) {
    this.#db = db;
    this.#worker = worker;
  }

  static async take(db: Database, worker: LeaseHolder): Promise<WorkerLease> {
    const lease = new WorkerLease(db, worker);
    await lease.#lock();
    return lease;
  }

  /** Takes the lock, then (again, after a lost connection: a gone worker's row may have been forgotten) the row. */
  async #lock(): Promise<void> {
    const connection = await this.#db.connect();
    try {
      // The lease first: a row without it could be forgotten as a gone worker's.
      await connection.query(`SELECT pg_advisory_lock(hashtext('${LEASE_CLASS}'), hashtext($1))`, [this.id]);
      await connection.query(
        `INSERT INTO workers (id, name, pid, host, standing, concurrency, started_at)
         VALUES ($1, $2, $3, $4, $5, $6, ${NOW_MS}) ON CONFLICT (id) DO NOTHING`,
        [
          this.id,
          this.#worker.name,
          process.pid,
          hostname(),
          this.#worker.standing,
          this.#worker.concurrency ?? 0,
        ],
      );
    } catch (error) {
      connection.release(error as Error);
      throw error;
    }
    if (this.#released) {
      connection.release(true);
      return;
    }
    this.#connection = connection;
    const lost = () => {
      if (this.#connection !== connection) return;
      this.#connection = undefined;
      connection.release(true);
      this.#again();
    };
    connection.on('error', lost);
    connection.on('end', lost);
  }

  #again(): void {
    if (this.#released) return;
    this.#retry = setTimeout(() => {
      this.#lock().catch(() => this.#again());
    }, 500);
  }

  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    clearTimeout(this.#retry);
    const connection = this.#connection;
    this.#connection = undefined;
    // Ending the connection lets go of the lock; the row goes once nothing is held under it.
    connection?.release(true);
    await this.#db
      .query(
        'DELETE FROM workers w WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM job_holders h WHERE h.worker_id = w.id)',
        [this.id],
      )
      .catch(() => {});
  }
}
