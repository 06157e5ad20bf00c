import { createHash, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { PgBoss } from 'pg-boss';
import type {
  DeadJob,
  Job,
  JobKind,
  JobParent,
  JobPlace,
  JobQueue,
  JobState,
  QueuedJob,
  QueueSignal,
  QueueStats,
  ReapedJobs,
  SetAsideJob,
  StoredApproval,
  WorkerRecord,
} from '../job-queue.ts';
import {
  type Connection,
  type Database,
  endSessionsOfDeadProcesses,
  sessionName,
  transaction,
} from './database.ts';
import type { Notifications } from './notifications.ts';
import {
  forgetGoneWorkers,
  type LeaseHolder,
  leaseHeld,
  orphanedJobs,
  WorkerLease,
} from './worker-leases.ts';

const QUEUES: Record<JobKind, string> = { tree: 'cadre-tree', run: 'cadre-run' };
const DEAD = 'cadre-dead';

/** Tries of a job before it is dead-lettered: the first and two retries (a worker dying counts as one). */
const RETRY_LIMIT = 2;
/**
 * A job whose worker sends no heartbeat for this long is failed and retried elsewhere (pg-boss's minimum);
 * the monitor looks every MONITOR_SECONDS, so a dead worker's job runs again within about 15 s.
 */
const HEARTBEAT_SECONDS = 10;
const MONITOR_SECONDS = 2;
/** The longest a job may stay active: Cadre's own limits end runs long before (pg-boss's maximum). */
const EXPIRE_SECONDS = 24 * 3600;

/**
 * Cadre's job queue on pg-boss (v12), in a schema of its own beside Cadre's tables: the `cadre-tree` and
 * `cadre-run` queues, retried with heartbeats and dead-lettered to `cadre-dead`. Cadre claims jobs with
 * `fetch` rather than pg-boss's `work` loop, because a parent waiting on its children must give its slot
 * back while it waits (a worker's capacity is Cadre's to count); waking on new jobs and stops uses Cadre's
 * own LISTEN connection. Job ids are UUIDs derived from Cadre's keys, so enqueueing twice is one job.
 */
export class PgBossJobQueue implements JobQueue {
  #boss: PgBoss;
  #db: Database;
  /** pg-boss's own schema, beside Cadre's tables. */
  #bossSchema: string;
  #notifications: Notifications;
  /** The table of each queue, as pg-boss names it. */
  #tables = new Map<string, string>();
  /** Claims held by this process, let go when it closes the queue. */
  #claims = new Set<() => Promise<void>>();
  /** Leases of this process's workers, let go when it closes the queue (what they hold stays theirs to reap). */
  #leases = new Set<WorkerLease>();

  private constructor(boss: PgBoss, db: Database, notifications: Notifications, bossSchema: string) {
    this.#bossSchema = bossSchema;
    this.#boss = boss;
    this.#db = db;
    this.#notifications = notifications;
  }

  static async open(
    url: string,
    db: Database,
    notifications: Notifications,
    schema: string,
  ): Promise<PgBossJobQueue> {
    const bossSchema = `${schema}_jobs`.slice(0, 50);
    const boss = new PgBoss({
      connectionString: url,
      application_name: sessionName(),
      schema: bossSchema,
      max: 4,
      superviseIntervalSeconds: MONITOR_SECONDS,
      monitorIntervalSeconds: MONITOR_SECONDS,
      schedule: false,
    });
    // A lost connection shows in the calls that fail; pg-boss reconnects by itself.
    boss.on('error', () => {});
    await boss.start();
    const options = {
      retryLimit: RETRY_LIMIT,
      heartbeatSeconds: HEARTBEAT_SECONDS,
      expireInSeconds: EXPIRE_SECONDS,
      deadLetter: DEAD,
    };
    await ensureQueue(boss, DEAD, {});
    for (const name of Object.values(QUEUES)) await ensureQueue(boss, name, options);
    return new PgBossJobQueue(boss, db, notifications, bossSchema);
  }

  jobId(key: string): string {
    return jobUuid(key);
  }

  async enqueue(kind: JobKind, id: string, data: unknown): Promise<void> {
    await this.#boss.send(QUEUES[kind], data as object, { id: jobUuid(id) });
    await this.signal('jobs', kind);
  }

  async forget(keys: ReadonlyArray<{ kind: JobKind; key: string }>): Promise<void> {
    for (const kind of Object.keys(QUEUES) as JobKind[]) {
      const ids = keys.filter((entry) => entry.kind === kind).map((entry) => jobUuid(entry.key));
      if (ids.length) await this.#boss.deleteJob(QUEUES[kind], ids);
    }
  }

  async enlist(worker: LeaseHolder): Promise<WorkerLease> {
    const lease = await WorkerLease.take(this.#db, worker);
    this.#leases.add(lease);
    return lease;
  }

  async reportSlots(workerId: string, used: number): Promise<void> {
    await this.#db.query('UPDATE workers SET slots_used = $2 WHERE id = $1', [workerId, used]);
  }

  async workers(): Promise<WorkerRecord[]> {
    // Each held run's last stored event: the events' (run_id, seq) key finds it without a scan.
    const { rows } = await this.#db.query<{
      id: string;
      name: string;
      pid: number;
      host: string;
      standing: boolean;
      alive: boolean;
      started_at: string;
      concurrency: number;
      slots_used: number;
      jobs: Array<{
        job_id: string;
        kind: JobKind;
        root_id: string;
        run_id: string;
        retry_count: number;
        taken_at: number;
        last_event_at: number | null;
      }> | null;
    }>(
      `SELECT w.id, w.name, w.pid, w.host, w.standing, ${leaseHeld('w.id')} AS alive, w.started_at,
         w.concurrency, w.slots_used,
         (SELECT json_agg(json_build_object('job_id', h.job_id, 'kind', h.kind, 'root_id', h.root_id,
            'run_id', h.run_id, 'retry_count', h.retry_count, 'taken_at', h.taken_at,
            'last_event_at', (SELECT e.time FROM events e WHERE e.run_id = h.run_id ORDER BY e.seq DESC LIMIT 1))
            ORDER BY h.taken_at)
          FROM job_holders h WHERE h.worker_id = w.id) AS jobs
       FROM workers w ORDER BY w.started_at, w.name`,
    );
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      pid: row.pid,
      host: row.host,
      standing: row.standing,
      alive: row.alive,
      startedAt: Number(row.started_at),
      concurrency: row.concurrency,
      slotsUsed: row.slots_used,
      jobs: (row.jobs ?? []).map((job) => ({
        jobId: job.job_id,
        kind: job.kind,
        rootRunId: job.root_id,
        runId: job.run_id,
        retryCount: job.retry_count,
        takenAt: Number(job.taken_at),
        lastEventAt: job.last_event_at === null ? undefined : Number(job.last_event_at),
      })),
    }));
  }

  async setAside(): Promise<SetAsideJob[]> {
    const { rows } = await this.#db.query<{
      job_id: string;
      kind: JobKind;
      waiting: number;
      suspended_at: string;
    }>(
      `SELECT job_id, kind, cardinality(waiting) AS waiting, suspended_at FROM suspended_jobs
       WHERE NOT woken ORDER BY suspended_at`,
    );
    const found: SetAsideJob[] = [];
    for (const row of rows) {
      const [job] = await this.#boss.findJobs(QUEUES[row.kind], { id: row.job_id });
      found.push({
        jobId: row.job_id,
        kind: row.kind,
        data: job?.data,
        waitingOn: row.waiting,
        since: Number(row.suspended_at),
      });
    }
    return found;
  }

  async failures(limit: number): Promise<QueuedJob[]> {
    const found: QueuedJob[] = [];
    for (const kind of ['tree', 'run'] as const) {
      const table = await this.#table(kind);
      if (!table) continue;
      const { rows } = await this.#db.query<JobRow>(
        `SELECT ${JOB_COLUMNS} FROM ${table} WHERE name = $1 AND state = 'failed'
         ORDER BY completed_on DESC LIMIT $2`,
        [QUEUES[kind], limit],
      );
      found.push(...rows.map((row) => queuedJob(kind, row)));
    }
    return found.sort((a, b) => (b.endedAt ?? 0) - (a.endedAt ?? 0)).slice(0, limit);
  }

  async find(idOrKey: string): Promise<QueuedJob | undefined> {
    const id = jobUuid(idOrKey);
    for (const kind of ['tree', 'run'] as const) {
      const table = await this.#table(kind);
      if (!table) continue;
      const { rows } = await this.#db.query<JobRow>(
        `SELECT ${JOB_COLUMNS} FROM ${table} WHERE name = $1 AND id = $2`,
        [QUEUES[kind], id],
      );
      if (rows[0]) return queuedJob(kind, rows[0]);
    }
    return undefined;
  }

  async drop(kind: JobKind, id: string): Promise<boolean> {
    const table = await this.#table(kind);
    if (!table) return false;
    const { rowCount } = await this.#db.query(
      `DELETE FROM ${table} WHERE name = $1 AND id = $2 AND state = 'failed'`,
      [QUEUES[kind], jobUuid(id)],
    );
    return Boolean(rowCount);
  }

  async waitingTree(
    userId: string,
    sessionId: string,
  ): Promise<{ rootRunId: string; answerId?: string } | undefined> {
    const table = await this.#table('tree');
    if (!table) return undefined;
    // Never taken, as withdraw says it: created, no try, neither set aside nor held.
    const { rows } = await this.#db.query<{ root: string; answer: string | null }>(
      `SELECT data->>'rootRunId' AS root, data->'spec'->>'answerId' AS answer FROM ${table} j
       WHERE name = $1 AND state = 'created' AND retry_count = 0
         AND data->>'userId' = $2 AND data->'spec'->>'sessionId' = $3
         AND NOT EXISTS (SELECT 1 FROM suspended_jobs WHERE job_id = j.id)
         AND NOT EXISTS (SELECT 1 FROM job_holders WHERE job_id = j.id)
       ORDER BY created_on DESC LIMIT 1`,
      [QUEUES.tree, userId, sessionId],
    );
    const row = rows[0];
    if (!row?.root) return undefined;
    return { rootRunId: row.root, ...(row.answer ? { answerId: row.answer } : {}) };
  }

  /** The table a queue's jobs are in, schema-qualified and quoted (undefined before the queue exists). */
  async #table(kind: JobKind): Promise<string | undefined> {
    const name = QUEUES[kind];
    let table = this.#tables.get(name);
    if (!table) {
      table = (await this.#boss.getQueue(name))?.table;
      if (!table) return undefined;
      this.#tables.set(name, table);
    }
    return `${quoted(this.#bossSchema)}.${quoted(table)}`;
  }

  async treeStopped(
    rootRunId: string,
    runId?: string,
  ): Promise<{ ended: boolean; reason?: string; alone?: boolean } | undefined> {
    const { rows } = await this.#db.query<{
      status: string | null;
      reason: string | null;
      alone: string | null;
    }>(
      `SELECT (SELECT status FROM runs WHERE id = $1) AS status,
              (SELECT reason FROM run_stop_requests WHERE root_id = $1) AS reason,
              (SELECT reason FROM run_stop_requests WHERE root_id = $2 AND $2 <> $1) AS alone`,
      [rootRunId, runId ?? rootRunId],
    );
    const { status, reason, alone } = rows[0] ?? { status: null, reason: null, alone: null };
    if (status && status !== 'running') return { ended: true };
    if (reason) return { ended: false, reason };
    return alone ? { ended: false, reason: alone, alone: true } : undefined;
  }

  async stopWaiting(userId: string, rootRunId: string, reason: string): Promise<void> {
    // Written before it is said: a worker that hears the signal reads the same reason when it takes it.
    await this.#db.query(
      `INSERT INTO run_stop_requests (root_id, user_id, reason, requested_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (root_id) DO NOTHING`,
      [rootRunId, userId, reason, Date.now()],
    );
    await this.signal('stop', JSON.stringify({ root: rootRunId, reason }));
  }

  async withdraw(kind: JobKind, key: string): Promise<boolean> {
    const id = jobUuid(key);
    const queue = await this.#boss.getQueue(QUEUES[kind]);
    if (!queue) return false;
    // Only a job still created and never taken: a worker's fetch locks the row and makes it active in one
    // statement, so the two cannot both have it. A job set aside or handed back is a worker's (it has run).
    const { rowCount } = await this.#db.query(
      `UPDATE ${quoted(this.#bossSchema)}.${quoted(queue.table)} SET state = 'cancelled', completed_on = now()
       WHERE name = $1 AND id = $2 AND state = 'created' AND retry_count = 0
         AND NOT EXISTS (SELECT 1 FROM suspended_jobs WHERE job_id = $2)
         AND NOT EXISTS (SELECT 1 FROM job_holders WHERE job_id = $2)`,
      [QUEUES[kind], id],
    );
    if (!rowCount) return false;
    await this.signal('ended', id);
    return true;
  }

  async othersAlive(workerId: string): Promise<boolean> {
    const { rows } = await this.#db.query<{ alive: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM workers w WHERE w.id <> $1 AND ${leaseHeld('w.id')}) AS alive`,
      [workerId],
    );
    return rows[0]?.alive ?? false;
  }

  async liveWorkers(): Promise<number> {
    const { rows } = await this.#db.query<{ live: number }>(
      `SELECT count(*)::int AS live FROM workers w WHERE ${leaseHeld('w.id')}`,
    );
    return rows[0]?.live ?? 0;
  }

  async stats(): Promise<QueueStats> {
    const kinds = [...Object.entries(QUEUES), ['dead', DEAD]] as Array<[JobKind | 'dead', string]>;
    const stats: QueueStats = { jobs: [], setAside: 0, oldestWaitingSeconds: { tree: 0, run: 0 } };
    for (const [kind, name] of kinds) {
      const queue = await this.#boss.getQueue(name);
      if (!queue) continue;
      const { rows } = await this.#db.query<{ state: string; count: number; oldest: number | null }>(
        `SELECT state, count(*)::int AS count,
           extract(epoch FROM now() - min(start_after) FILTER (WHERE state IN ('created', 'retry')
             AND start_after <= now())) AS oldest
         FROM ${quoted(this.#bossSchema)}.${quoted(queue.table)}
         WHERE name = $1 AND state IN ('created', 'retry', 'active', 'failed')
         GROUP BY state`,
        [name],
      );
      for (const row of rows) {
        stats.jobs.push({ kind, state: row.state, count: row.count });
        if (kind !== 'dead' && row.oldest !== null)
          stats.oldestWaitingSeconds[kind] = Math.max(stats.oldestWaitingSeconds[kind], Number(row.oldest));
      }
    }
    const { rows } = await this.#db.query<{ count: number }>(
      'SELECT count(*)::int AS count FROM suspended_jobs WHERE NOT woken',
    );
    stats.setAside = rows[0]?.count ?? 0;
    return stats;
  }

  async take(count: number, workerId: string, placeOf: (job: Job) => JobPlace): Promise<Job[]> {
    // One transaction: a job fetched is recorded as held (and as resumed) with it, or not fetched at all.
    return transaction(this.#db, async (connection) => {
      const db = inTransaction(connection);
      const jobs: Job[] = [];
      for (const kind of ['run', 'tree'] as const) {
        if (jobs.length >= count) break;
        const fetched = await this.#boss.fetch<{ key: string }>(QUEUES[kind], {
          batchSize: count - jobs.length,
          includeMetadata: true,
          db,
        });
        for (const job of fetched)
          jobs.push({
            id: job.id,
            kind,
            data: job.data,
            retryCount: job.retryCount ?? 0,
            tries: triesOf(job.retryCount ?? 0, job.retryLimit ?? RETRY_LIMIT),
            waitingSince: Math.max(job.createdOn.getTime(), job.startAfter.getTime()),
          });
      }
      if (!jobs.length) return jobs;
      // Jobs put back on the queue after a suspension go on from their journal.
      const { rows } = await connection.query<{ job_id: string }>(
        'DELETE FROM suspended_jobs WHERE job_id = ANY($1::uuid[]) AND woken RETURNING job_id',
        [jobs.map((job) => job.id)],
      );
      const resumed = new Set(rows.map((row) => row.job_id));
      for (const job of jobs) if (resumed.has(job.id)) job.resumed = true;
      // Who holds each job, so its worker's death is seen at once by every process (see worker-leases.ts).
      const places = jobs.map(placeOf);
      await connection.query(
        `INSERT INTO job_holders (job_id, kind, retry_count, worker_id, root_id, run_id, taken_at)
         SELECT * FROM unnest($1::uuid[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::bigint[])
         ON CONFLICT (job_id) DO UPDATE SET kind = excluded.kind, retry_count = excluded.retry_count,
           worker_id = excluded.worker_id, root_id = excluded.root_id, run_id = excluded.run_id,
           taken_at = excluded.taken_at`,
        [
          jobs.map((job) => job.id),
          jobs.map((job) => job.kind),
          jobs.map((job) => job.retryCount),
          jobs.map(() => workerId),
          places.map((place) => place.rootRunId),
          places.map((place) => place.runId),
          jobs.map(() => Date.now()),
        ],
      );
      return jobs;
    });
  }

  async heartbeat(jobs: readonly Job[], workerId: string): Promise<Job[]> {
    for (const kind of ['run', 'tree'] as const) {
      const ids = jobs.filter((job) => job.kind === kind).map((job) => job.id);
      if (ids.length) await this.#boss.touch(QUEUES[kind], ids);
    }
    const { rows } = await this.#db.query<{ job_id: string; retry_count: number }>(
      'SELECT job_id, retry_count FROM job_holders WHERE job_id = ANY($1::uuid[]) AND worker_id = $2',
      [jobs.map((job) => job.id), workerId],
    );
    // Held still means this very attempt: one taken again (by this worker too) is another.
    const held = new Set(rows.map((row) => `${row.job_id}:${row.retry_count}`));
    return jobs.filter((job) => !held.has(`${job.id}:${job.retryCount}`));
  }

  async complete(job: Job, output: unknown, parent?: JobParent): Promise<void> {
    if (!parent) {
      await this.#boss.complete(QUEUES[job.kind], attempt(job), { output } as object);
      await this.#dropPayload(job, this.#db);
      await this.#letGo(job);
    } else {
      // The end and the parent's wake commit together: a worker dying between them would leave the
      // parent set aside with nobody left to put it back.
      const woken = await this.#waking(parent, job.id, async (connection) => {
        const db = { db: inTransaction(connection) };
        const ended = await this.#boss.complete(QUEUES[job.kind], attempt(job), { output } as object, db);
        await this.#dropPayload(job, connection);
        await connection.query('DELETE FROM job_holders WHERE job_id = $1 AND retry_count = $2', [
          job.id,
          job.retryCount,
        ]);
        // An attempt taken from this worker meanwhile ends nothing: the child still runs elsewhere.
        return Boolean((ended as { affected?: number }).affected);
      });
      if (woken) await this.signal('jobs', parent.kind);
    }
    await this.signal('ended', job.id);
  }

  /**
   * A completed job's payload (the question, its history, a sub-agent's request) is needed no more: only
   * its output is read after it ends. pg-boss would keep it for days (`deleteAfterSeconds`).
   */
  async #dropPayload(job: Job, db: { query: Database['query'] }): Promise<void> {
    const table = await this.#table(job.kind);
    if (!table) return;
    await db.query(`UPDATE ${table} SET data = NULL WHERE name = $1 AND id = $2 AND state = 'completed'`, [
      QUEUES[job.kind],
      job.id,
    ]);
  }

  async fail(job: Job, error: string): Promise<void> {
    await this.#boss.fail(QUEUES[job.kind], attempt(job), { message: error });
    await this.#letGo(job);
    await this.signal('ended', job.id);
  }

  async #letGo(job: Job): Promise<void> {
    await this.#db.query('DELETE FROM job_holders WHERE job_id = $1 AND retry_count = $2', [
      job.id,
      job.retryCount,
    ]);
  }

  async suspend(job: Job, children: readonly string[]): Promise<boolean> {
    return transaction(this.#db, async (connection) => {
      // One at a time with the children's ends (`childEnded`): an end either comes first and is seen
      // here, or comes after and finds this job set aside.
      await connection.query("SELECT pg_advisory_xact_lock(hashtext('cadre-suspend'), hashtext($1))", [
        job.id,
      ]);
      const waiting: string[] = [];
      for (const child of children) if (!(await this.#ended(connection, 'run', child))) waiting.push(child);
      if (!waiting.length) return false;
      await connection.query(
        `INSERT INTO suspended_jobs (job_id, kind, waiting, suspended_at) VALUES ($1, $2, $3::uuid[], $4)
         ON CONFLICT (job_id) DO UPDATE SET kind = excluded.kind, waiting = excluded.waiting, woken = false,
           suspended_at = excluded.suspended_at`,
        [job.id, job.kind, waiting, Date.now()],
      );
      await connection.query('DELETE FROM job_holders WHERE job_id = $1 AND retry_count = $2', [
        job.id,
        job.retryCount,
      ]);
      const cancelled = await this.#boss.cancel(QUEUES[job.kind], attempt(job), {
        db: inTransaction(connection),
      });
      // Taken from this worker meanwhile: it is not this worker's to set aside.
      if (!(cancelled as { affected?: number }).affected) throw new NotSuspended();
      return true;
    }).catch((error: unknown) => {
      if (error instanceof NotSuspended) return false;
      throw error;
    });
  }

  async handBack(job: Job): Promise<void> {
    await transaction(this.#db, async (connection) => {
      const db = { db: inTransaction(connection) };
      const cancelled = await this.#boss.cancel(QUEUES[job.kind], attempt(job), db);
      // Taken from this worker meanwhile: someone else runs it now.
      if (!(cancelled as { affected?: number }).affected) return;
      await connection.query(
        `INSERT INTO suspended_jobs (job_id, kind, waiting, woken, suspended_at) VALUES ($1, $2, '{}', true, $3)
         ON CONFLICT (job_id) DO UPDATE SET waiting = '{}', woken = true, suspended_at = excluded.suspended_at`,
        [job.id, job.kind, Date.now()],
      );
      await connection.query('DELETE FROM job_holders WHERE job_id = $1 AND retry_count = $2', [
        job.id,
        job.retryCount,
      ]);
      await this.#putBack(connection, job.kind, job.id);
    });
    await this.signal('jobs', job.kind);
  }

  async postpone(job: Job, seconds: number): Promise<void> {
    await transaction(this.#db, async (connection) => {
      const cancelled = await this.#boss.cancel(QUEUES[job.kind], attempt(job), {
        db: inTransaction(connection),
      });
      // Taken from this worker meanwhile: someone else has it.
      if (!(cancelled as { affected?: number }).affected) return;
      await connection.query('DELETE FROM job_holders WHERE job_id = $1 AND retry_count = $2', [
        job.id,
        job.retryCount,
      ]);
      await this.#putBack(connection, job.kind, job.id, seconds);
    });
  }

  /**
   * Runs `end` (a child job's end) and, in the same transaction and under the parent's lock, takes the
   * child off what its parent waits on; resolves true when that put the parent back on the queue.
   */
  async #waking(
    parent: JobParent,
    childJobId: string,
    end: (connection: Connection) => Promise<boolean>,
  ): Promise<boolean> {
    const parentId = jobUuid(parent.key);
    return transaction(this.#db, async (connection) => {
      await connection.query("SELECT pg_advisory_xact_lock(hashtext('cadre-suspend'), hashtext($1))", [
        parentId,
      ]);
      if (!(await end(connection))) return false;
      const { rows } = await connection.query<{ waiting: string[] }>(
        `UPDATE suspended_jobs SET waiting = array_remove(waiting, $2::uuid)
         WHERE job_id = $1 AND NOT woken RETURNING waiting`,
        [parentId, childJobId],
      );
      if (!rows[0] || rows[0].waiting.length) return false;
      await connection.query('UPDATE suspended_jobs SET woken = true WHERE job_id = $1', [parentId]);
      await this.#putBack(connection, parent.kind, parentId);
      return true;
    });
  }

  /**
   * Puts a job set aside (cancelled) back on the queue, in `connection`'s transaction. pg-boss counts its
   * next start as a retry; its retry limit grows by one with it, so being set aside never spends a try.
   */
  async #putBack(connection: Connection, kind: JobKind, id: string, afterSeconds?: number): Promise<void> {
    const db = { db: inTransaction(connection) };
    await this.#boss.resume(QUEUES[kind], id, db);
    const [job] = await this.#boss.findJobs(QUEUES[kind], { id });
    if (job)
      await this.#boss.update(QUEUES[kind], undefined, {
        id,
        retryLimit: job.retryLimit + 1,
        ...(afterSeconds ? { startAfter: afterSeconds } : {}),
        ...db,
      });
  }

  /** Whether a job has ended for good (a suspended one has not: it waits on its own children). */
  async #ended(connection: Connection, kind: JobKind, id: string): Promise<boolean> {
    const [job] = await this.#boss.findJobs(QUEUES[kind], { id });
    if (!job) return true;
    if (job.state === 'completed' || job.state === 'failed') return true;
    if (job.state !== 'cancelled') return false;
    const { rowCount } = await connection.query('SELECT 1 FROM suspended_jobs WHERE job_id = $1', [id]);
    return !rowCount;
  }

  async reap(): Promise<ReapedJobs> {
    const reaped: ReapedJobs = { retried: [], givenUp: [] };
    for (const orphan of await orphanedJobs(this.#db)) {
      const queue = orphan.kind === 'tree' ? QUEUES.tree : QUEUES.run;
      const fenced = { id: orphan.jobId, retryCount: orphan.retryCount };
      const place = { rootRunId: orphan.rootRunId, runId: orphan.runId };
      // Fenced on the attempt the gone worker held: one another process reaped (or that ended) is left be.
      const result = orphan.takeable
        ? await this.#boss.fail(queue, fenced, {
            message: `its worker (pid ${orphan.pid} on ${orphan.host}) is gone`,
          })
        : await this.#boss.cancel(queue, fenced);
      await this.#db.query(
        'DELETE FROM job_holders WHERE job_id = $1 AND worker_id = $2 AND retry_count = $3',
        [orphan.jobId, orphan.workerId, orphan.retryCount],
      );
      if (!(result as { affected?: number }).affected) continue;
      if (orphan.takeable) reaped.retried.push(place);
      else reaped.givenUp.push({ ...place, pid: orphan.pid, host: orphan.host });
      await this.signal(orphan.takeable ? 'jobs' : 'ended', orphan.jobId);
    }
    await forgetGoneWorkers(this.#db);
    return reaped;
  }

  async state(kind: JobKind, id: string): Promise<JobState> {
    const [first] = await this.#boss.findJobs(QUEUES[kind], { id: jobUuid(id) });
    if (first?.state !== 'cancelled') return stateOf(first, false);
    // Cancelled: set aside, or not. The job and its mark are read again in one snapshot: a job put back
    // and taken between two separate reads would look cancelled with no mark, i.e. failed.
    const { job, setAside } = await transaction(this.#db, async (connection) => {
      await connection.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const [found] = await this.#boss.findJobs(QUEUES[kind], {
        id: jobUuid(id),
        db: inTransaction(connection),
      });
      const { rowCount } = found
        ? await connection.query('SELECT 1 FROM suspended_jobs WHERE job_id = $1', [found.id])
        : { rowCount: 0 };
      return { job: found, setAside: Boolean(rowCount) };
    });
    return stateOf(job, setAside);
  }

  async takeDead(count: number): Promise<DeadJob[]> {
    const jobs = await this.#boss.fetch(DEAD, { batchSize: count, includeMetadata: true });
    return Promise.all(
      jobs.map(async (job) => {
        const kind: JobKind = job.sourceName === QUEUES.tree ? 'tree' : 'run';
        // The dead letter carries the payload; why it failed is on the job it came from.
        const [source] = job.sourceId ? await this.#boss.findJobs(QUEUES[kind], { id: job.sourceId }) : [];
        return {
          id: job.id,
          sourceId: job.sourceId ?? job.id,
          kind,
          data: job.data,
          error: messageOf(source?.output ?? job.output),
        };
      }),
    );
  }

  async settleDead(job: DeadJob, parent?: JobParent): Promise<void> {
    if (!parent) await this.#boss.complete(DEAD, job.id);
    else if (
      await this.#waking(parent, job.sourceId, async (connection) => {
        await this.#boss.complete(DEAD, job.id, null, { db: inTransaction(connection) });
        return true;
      })
    )
      await this.signal('jobs', parent.kind);
    await this.signal('ended', job.sourceId);
  }

  async charge(rootRunId: string, tokens: number): Promise<number> {
    const { rows } = await this.#db.query<{ spent: number }>(
      `INSERT INTO tree_ledger (root_id, spent) VALUES ($1, $2)
       ON CONFLICT (root_id) DO UPDATE SET spent = tree_ledger.spent + excluded.spent RETURNING spent`,
      [rootRunId, tokens],
    );
    return rows[0]?.spent ?? tokens;
  }

  async spent(rootRunId: string): Promise<number> {
    const { rows } = await this.#db.query<{ spent: number }>(
      'SELECT spent FROM tree_ledger WHERE root_id = $1',
      [rootRunId],
    );
    return rows[0]?.spent ?? 0;
  }

  async claim(
    key: string,
  ): Promise<{ release: () => Promise<void> } | { heldBy: { pid: number; host: string } }> {
    // A session-level advisory lock on a connection of its own: the database lets it go with the
    // connection, so a process killed mid-claim leaves nothing behind. The row says who holds it.
    const connection = await this.#db.connect();
    try {
      const tryLock = async () =>
        (
          await connection.query<{ held: boolean }>(
            "SELECT pg_try_advisory_lock(hashtext('cadre-claim'), hashtext($1)) AS held",
            [key],
          )
        ).rows[0]?.held;
      // Held by a process of this machine that was just killed: its session is ended, and the claim free.
      let held = await tryLock();
      if (!held) {
        await endSessionsOfDeadProcesses(this.#db);
        held = await tryLock();
      }
      if (!held) {
        connection.release();
        const holder = await this.#db.query<{ pid: number; host: string }>(
          'SELECT pid, host FROM claims WHERE key = $1',
          [key],
        );
        return { heldBy: holder.rows[0] ?? { pid: 0, host: '' } };
      }
      await connection.query(
        `INSERT INTO claims (key, pid, host) VALUES ($1, $2, $3)
         ON CONFLICT (key) DO UPDATE SET pid = excluded.pid, host = excluded.host`,
        [key, process.pid, hostname()],
      );
    } catch (error) {
      connection.release(error as Error);
      throw error;
    }
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      this.#claims.delete(release);
      await connection.query('DELETE FROM claims WHERE key = $1', [key]).catch(() => {});
      await connection
        .query("SELECT pg_advisory_unlock(hashtext('cadre-claim'), hashtext($1))", [key])
        .catch(() => {});
      connection.release();
    };
    this.#claims.add(release);
    return { release };
  }

  async sharedSecret(name: string): Promise<Buffer> {
    await this.#db.query(
      'INSERT INTO shared_secrets (name, secret) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING',
      [name, randomBytes(32).toString('hex')],
    );
    const { rows } = await this.#db.query<{ secret: string }>(
      'SELECT secret FROM shared_secrets WHERE name = $1',
      [name],
    );
    return Buffer.from(rows[0]!.secret, 'hex');
  }

  async putApproval(approval: StoredApproval): Promise<void> {
    await this.#db.query(
      `INSERT INTO pending_approvals (approval_id, user_id, request, created_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (approval_id) DO NOTHING`,
      [approval.approvalId, approval.userId, approval.request, Date.now()],
    );
  }

  async pendingApprovals(userId: string): Promise<StoredApproval[]> {
    const { rows } = await this.#db.query<{ approval_id: string; user_id: string; request: string }>(
      `SELECT approval_id, user_id, request FROM pending_approvals
       WHERE user_id = $1 AND decision IS NULL ORDER BY created_at`,
      [userId],
    );
    return rows.map((row) => ({ approvalId: row.approval_id, userId: row.user_id, request: row.request }));
  }

  async decideApproval(userId: string, approvalId: string, decision: string): Promise<boolean> {
    const { rowCount } = await this.#db.query(
      `UPDATE pending_approvals SET decision = $3
       WHERE approval_id = $1 AND user_id = $2 AND decision IS NULL`,
      [approvalId, userId, decision],
    );
    if (!rowCount) return false;
    await this.signal('decided', approvalId);
    return true;
  }

  async decideSeenApproval(approval: StoredApproval, decision: string): Promise<void> {
    await this.#db.query(
      `INSERT INTO pending_approvals (approval_id, user_id, request, decision, created_at)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (approval_id) DO UPDATE SET decision = excluded.decision
       WHERE pending_approvals.decision IS NULL AND pending_approvals.user_id = excluded.user_id`,
      [approval.approvalId, approval.userId, approval.request, decision, Date.now()],
    );
    await this.signal('decided', approval.approvalId);
  }

  async takeDecision(approvalId: string): Promise<string | undefined> {
    const { rows } = await this.#db.query<{ decision: string }>(
      'DELETE FROM pending_approvals WHERE approval_id = $1 AND decision IS NOT NULL RETURNING decision',
      [approvalId],
    );
    return rows[0]?.decision;
  }

  async dropApproval(approvalId: string): Promise<void> {
    await this.#db.query('DELETE FROM pending_approvals WHERE approval_id = $1', [approvalId]);
  }

  async signal(signal: QueueSignal, payload: string): Promise<void> {
    await this.#notifications.notify(this.#db, signal, payload);
  }

  listen(signal: QueueSignal, listener: (payload: string) => void): Promise<() => void> {
    return this.#notifications.listen(signal, listener);
  }

  async close(): Promise<void> {
    for (const release of [...this.#claims]) await release();
    for (const lease of this.#leases) await lease.release();
    await this.#boss.stop({ graceful: false, close: true }).catch(() => {});
  }
}

/** Where a job is, as pg-boss has it (and whether a cancelled one is only set aside). */
function stateOf(job: { state: string; output?: unknown } | undefined, setAside: boolean): JobState {
  if (!job) return { state: 'missing' };
  switch (job.state) {
    case 'created':
    case 'retry':
      return { state: 'waiting' };
    case 'active':
      return { state: 'active' };
    case 'completed':
      return { state: 'completed', output: (job.output as { output?: unknown } | null)?.output };
    case 'cancelled':
      // Set aside while it waits on its own children: still under way.
      return setAside ? { state: 'waiting' } : { state: 'failed', error: messageOf(job.output) };
    default:
      return { state: 'failed', error: messageOf(job.output) };
  }
}

/** The columns of a job an operator is shown (see `queuedJob`). */
const JOB_COLUMNS = 'id, state, data, output, retry_count, retry_limit, created_on, started_on, completed_on';

interface JobRow {
  id: string;
  state: string;
  data: unknown;
  output: unknown;
  retry_count: number;
  retry_limit: number;
  created_on: Date;
  started_on: Date | null;
  completed_on: Date | null;
}

function queuedJob(kind: JobKind, row: JobRow): QueuedJob {
  return {
    id: row.id,
    kind,
    state: row.state,
    data: row.data,
    tries: row.started_on ? Math.max(0, triesOf(row.retry_count, row.retry_limit)) : 0,
    createdAt: row.created_on.getTime(),
    endedAt: row.completed_on?.getTime(),
    error: row.state === 'failed' ? messageOf(row.output) : undefined,
  };
}

/**
 * Which try of a job a start with this retry count is (1 for the first), as pg-boss counts retries but
 * without the set-asides and hand-backs: pg-boss counts each start after one as a retry, and each time a
 * job was put back (see `#putBack`) its limit grew by one with it, so the limit's growth past RETRY_LIMIT
 * is how many of those starts were not tries.
 */
function triesOf(retryCount: number, retryLimit: number): number {
  return retryCount + 1 - Math.max(0, retryLimit - RETRY_LIMIT);
}

/** A suspension given up inside its transaction (rolled back). */
class NotSuspended extends Error {}

/** A connection in a transaction as pg-boss takes one (`{ db }`), so its change commits with Cadre's. */
function inTransaction(connection: Connection): {
  executeSql: (text: string, values?: unknown[]) => Promise<{ rows: any[] }>;
} {
  return { executeSql: (text, values) => connection.query(text, values as unknown[]) };
}

/** The attempt a worker took, so settling it leaves a later attempt (another worker's) alone. */
function attempt(job: Job): { id: string; retryCount: number } {
  return { id: job.id, retryCount: job.retryCount };
}

/** A schema or table name as SQL text. */
function quoted(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** A job's id as pg-boss wants it (a UUID), the same for the same key wherever it is computed. */
export function jobUuid(key: string): string {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(key)) return key;
  const hex = createHash('sha256').update(key).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

async function ensureQueue(boss: PgBoss, name: string, options: object): Promise<void> {
  if (await boss.getQueue(name)) return;
  try {
    await boss.createQueue(name, options);
  } catch (error) {
    // Another process made it between the look and the creation.
    if (!(await boss.getQueue(name))) throw error;
  }
}

function messageOf(output: unknown): string {
  const message = (output as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message ? message : 'the job failed';
}
