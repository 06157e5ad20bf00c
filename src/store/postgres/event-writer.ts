import type { CadreEvent } from '../../core/events.ts';
import { payloadHash, splitPayload } from '../payloads.ts';
import { currentOwner, type RunOwner, runsStartedHere } from '../run-owner.ts';
import { finishedEnvelope } from '../run-rows.ts';
import { safeJson } from '../safe-json.ts';
import type { AttemptRow, JournalEntryRow as JournalRow } from '../sql/journal-store.ts';
import { type Connection, type Database, transaction } from './database.ts';
import { toPgText } from './text.ts';

type Item =
  | { kind: 'event'; event: CadreEvent }
  | { kind: 'journal'; row: JournalRow; done?: Waiter }
  | { kind: 'attempt'; row: AttemptRow; done?: Waiter };

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
}

/** The owner recorded with runs executed as jobs. */
export const JOB_OWNER = 'queue';

/** Outputs at least this long (characters of JSON) are stored once, by content, and referenced. */
const PAYLOAD_THRESHOLD = 2_048;
/** Items written per transaction: long enough to amortise a commit, short enough to keep locks brief. */
const BATCH = 500;
/** Tries of one batch before its items are given up (the database restarting is waited out this long). */
const RETRIES = [50, 200, 500, 1_000, 2_000];

/**
 * Writes runs' events, journal entries and attempts to PostgreSQL in order, in batches, off the run's hot
 * path: `record` only queues. A batch is one transaction; each tree's events get the next cursors under a
 * lock on the tree (`pg_advisory_xact_lock`), so processes writing one tree's events at once never take
 * the same cursor. A journal entry put `now` and an attempt resolve once committed.
 */
export class EventWriter {
  #db: Database;
  #owner: RunOwner;
  #queue: Item[] = [];
  #draining: Promise<void> | undefined;
  #closed = false;
  /** Called when a batch cannot be written after every retry: its events are lost, its waiters told. */
  onWriteError: (error: unknown) => void = () => {};
  /**
   * The channel on which each batch's trees are announced as it commits (NOTIFY with the root run's id),
   * so processes following them read at once instead of asking again and again.
   */
  eventsChannel: string | undefined;
  /** The channel chat lists listen on: told when a batch starts or ends a tree (its root's run). */
  listsChannel: string | undefined;

  constructor(db: Database, owner: RunOwner = currentOwner()) {
    this.#db = db;
    this.#owner = owner;
  }

  /**
   * Records runs from now on as the queue's rather than this process's: a run executed as a job is judged
   * by its job's heartbeats, never closed by a sweep because this process is gone.
   */
  recordRunsAsJobs(): void {
    this.#owner = { pid: 0, host: JOB_OWNER };
  }

  enqueueEvent(event: CadreEvent): void {
    if (event.type === 'run-start') runsStartedHere.add(event.runId);
    else if (event.type === 'run-finish') runsStartedHere.delete(event.runId);
    if (this.#closed) return;
    this.#push({ kind: 'event', event });
  }

  /** Queues a journal entry; resolves once it is committed. */
  enqueueJournal(row: JournalRow): Promise<void> {
    return this.#waitFor((done) => ({ kind: 'journal', row, done }));
  }

  /** Queues an attempt; resolves once it is committed. */
  enqueueAttempt(row: AttemptRow): Promise<void> {
    return this.#waitFor((done) => ({ kind: 'attempt', row, done }));
  }

  /** Resolves once everything queued before the call is committed (or given up). */
  async flush(): Promise<void> {
    while (this.#draining || this.#queue.length) {
      this.#draining ??= this.#drain();
      await this.#draining;
    }
  }

  /** Writes what is queued and refuses more. */
  async close(): Promise<void> {
    await this.flush();
    this.#closed = true;
  }

  #waitFor(item: (done: Waiter) => Item): Promise<void> {
    if (this.#closed) return Promise.resolve();
    return new Promise((resolve, reject) => this.#push(item({ resolve, reject })));
  }

  #push(item: Item): void {
    this.#queue.push(item);
    // The events of one turn of the event loop go in one batch.
    if (!this.#draining)
      this.#draining = new Promise((resolve) => setImmediate(resolve)).then(() => this.#drain());
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queue.length) {
        const batch = this.#queue.splice(0, BATCH);
        try {
          await this.#writeWithRetries(batch);
          for (const item of batch) if (item.kind !== 'event') item.done?.resolve();
        } catch (error) {
          for (const item of batch) if (item.kind !== 'event') item.done?.reject(error);
          this.onWriteError(error);
        }
      }
    } finally {
      this.#draining = undefined;
    }
  }

  async #writeWithRetries(batch: Item[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await transaction(this.#db, (connection) => this.#write(connection, batch));
        return;
      } catch (error) {
        const pause = RETRIES[attempt];
        if (pause === undefined || !retryable(error)) throw error;
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  /**
   * One batch as a handful of set-based statements (a statement per table, not per item: a round trip
   * each is what a busy tree cannot afford). Locks on its trees' cursors and its journals' positions are
   * taken in one sorted order, so two processes writing the same trees wait instead of deadlocking.
   */
  async #write(connection: Connection, batch: Item[]): Promise<void> {
    const events = batch.flatMap((item) => (item.kind === 'event' ? [item.event] : []));
    const entries = batch.flatMap((item) => (item.kind === 'journal' ? [item.row] : []));
    const attempts = batch.flatMap((item) => (item.kind === 'attempt' ? [item.row] : []));
    const roots = [...new Set(events.map((event) => event.rootRunId || event.runId))];
    const journals = [...new Set(entries.map((entry) => entry.journalId))];
    const locks = [...roots.map((root) => `events:${root}`), ...journals.map((id) => `journal:${id}`)].sort();
    if (locks.length)
      await connection.query(
        'SELECT pg_advisory_xact_lock(hashtext(key)) FROM unnest($1::text[]) AS key ORDER BY key',
        [locks],
      );
    const payloads = new Map<string, string>();
    if (events.length) await this.#writeEvents(connection, events, roots, payloads);
    // Sent when the transaction commits: a follower told reads what is there.
    if (events.length && this.eventsChannel)
      await connection.query('SELECT pg_notify($1, root) FROM unnest($2::text[]) AS root', [
        this.eventsChannel,
        roots,
      ]);
    if (
      this.listsChannel &&
      events.some(
        (event) => event.parentRunId === null && (event.type === 'run-start' || event.type === 'run-finish'),
      )
    )
      await connection.query("SELECT pg_notify($1, '')", [this.listsChannel]);
    if (entries.length) await writeJournal(connection, entries, journals, payloads);
    if (payloads.size)
      await connection.query(
        'INSERT INTO payloads (hash, body) SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT DO NOTHING',
        [[...payloads.keys()], [...payloads.values()]],
      );
    if (attempts.length)
      await connection.query(
        `INSERT INTO journal_attempts (root_run_id, journal_id, user_id, spec, started_at)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[])
         ON CONFLICT (root_run_id) DO NOTHING`,
        columns(attempts, ['rootRunId', 'journalId', 'userId', 'spec', 'startedAt']),
      );
  }

  /** The events with their trees' next cursors, and the runs rows their starts and finishes make. */
  async #writeEvents(
    connection: Connection,
    events: CadreEvent[],
    roots: string[],
    payloads: Map<string, string>,
  ): Promise<void> {
    const { rows } = await connection.query<{ root_id: string; last: number }>(
      'SELECT root_id, max(root_seq) AS last FROM events WHERE root_id = ANY($1::text[]) GROUP BY root_id',
      [roots],
    );
    const cursors = new Map(rows.map((row) => [row.root_id, row.last]));
    // A repeat (a replayed event, a second closer's) is numbered nothing: the cursors stay gapless, as
    // a process following the tree numbers the events it reads (the asker of a queued tree: a gap there
    // read the tree's last events, its answer, a second time).
    const present = await connection.query<{ run_id: string; seq: number }>(
      `SELECT e.run_id, e.seq FROM events e
       JOIN unnest($1::text[], $2::int[]) AS b(run_id, seq) ON e.run_id = b.run_id AND e.seq = b.seq`,
      [events.map((event) => event.runId), events.map((event) => event.seq)],
    );
    const seen = new Set(present.rows.map((row) => `${row.run_id}:${row.seq}`));
    const fresh = events.filter((event) => {
      const key = `${event.runId}:${event.seq}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    const eventRows = fresh.map((event) => {
      const rootId = event.rootRunId || event.runId;
      const cursor = (cursors.get(rootId) ?? 0) + 1;
      cursors.set(rootId, cursor);
      const split = splitPayload(event, PAYLOAD_THRESHOLD);
      if (split.payload) payloads.set(split.payload.hash, split.payload.json);
      return {
        rootId,
        cursor,
        runId: event.runId,
        seq: event.seq,
        type: event.type,
        time: event.time,
        body: split.body,
        hash: split.payload?.hash ?? null,
      };
    });
    const inserted = await connection.query<{ run_id: string; seq: number }>(
      `INSERT INTO events (root_id, root_seq, run_id, seq, type, time, body, payload_hash)
       SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::int[], $5::text[], $6::bigint[], $7::text[], $8::text[])
       ON CONFLICT (run_id, seq) DO NOTHING RETURNING run_id, seq`,
      columns(eventRows, ['rootId', 'cursor', 'runId', 'seq', 'type', 'time', 'body', 'hash']),
    );
    // A repeat (a replayed event, or a second closer's) is not stored: the runs row follows what is.
    const stored = new Set(inserted.rows.map((row) => `${row.run_id}:${row.seq}`));
    const starts = events.flatMap((event) =>
      event.type === 'run-start'
        ? [
            {
              id: event.runId,
              parentId: event.parentRunId,
              rootId: event.rootRunId || event.runId,
              sessionId: event.sessionId ?? null,
              userId: event.userId,
              agent: event.agent,
              task: toPgText(event.task),
              model: event.model,
              depth: event.depth,
              time: event.time,
            },
          ]
        : [],
    );
    if (starts.length)
      await connection.query(
        `INSERT INTO runs (id, parent_id, root_id, session_id, user_id, agent, task, model, depth, status,
           started_at, owner_pid, owner_host)
         SELECT s.id, s.parent_id, s.root_id, s.session_id, s.user_id, s.agent, s.task, s.model, s.depth,
                'running', s.time, $11, $12
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                     $8::text[], $9::int[], $10::bigint[])
           AS s(id, parent_id, root_id, session_id, user_id, agent, task, model, depth, time)
         ON CONFLICT (id) DO NOTHING`,
        [
          ...columns(starts, [
            'id',
            'parentId',
            'rootId',
            'sessionId',
            'userId',
            'agent',
            'task',
            'model',
            'depth',
            'time',
          ]),
          this.#owner.pid,
          this.#owner.host,
        ],
      );
    const finishes = events.flatMap((event) =>
      event.type === 'run-finish' && stored.has(`${event.runId}:${event.seq}`)
        ? [
            {
              id: event.runId,
              status: event.status,
              summary: toPgText(event.summary),
              envelope: safeJson(finishedEnvelope(event)),
              time: event.time,
            },
          ]
        : [],
    );
    if (finishes.length)
      await connection.query(
        `UPDATE runs SET status = f.status, summary = f.summary, envelope = f.envelope, ended_at = f.time
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[]) AS f(id, status, summary, envelope, time)
         WHERE runs.id = f.id`,
        columns(finishes, ['id', 'status', 'summary', 'envelope', 'time']),
      );
  }
}

/**
 * Journal entries after each journal's last, in the order put; a large output stored once under the
 * hash its tool-result event uses (see payloads.ts), so the two share it.
 */
async function writeJournal(
  connection: Connection,
  entries: JournalRow[],
  journals: string[],
  payloads: Map<string, string>,
): Promise<void> {
  const { rows } = await connection.query<{ journal_id: string; last: number }>(
    'SELECT journal_id, max(position) AS last FROM journal WHERE journal_id = ANY($1::text[]) GROUP BY journal_id',
    [journals],
  );
  const positions = new Map(rows.map((row) => [row.journal_id, row.last]));
  const entryRows = entries.map((entry) => {
    const position = (positions.get(entry.journalId) ?? 0) + 1;
    positions.set(entry.journalId, position);
    const large = entry.output !== undefined && entry.output.length >= PAYLOAD_THRESHOLD;
    const hash = large ? payloadHash(entry.output!) : null;
    if (hash) payloads.set(hash, entry.output!);
    return { ...entry, position, body: hash ? '{"ok":true,"$payload":"output"}' : entry.body, hash };
  });
  await connection.query(
    `INSERT INTO journal (journal_id, position, run_key, kind, key, body, payload_hash)
     SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
     ON CONFLICT (journal_id, run_key, kind, key) DO NOTHING`,
    columns(entryRows, ['journalId', 'position', 'runKey', 'kind', 'key', 'body', 'hash']),
  );
}

/** The rows' values column by column, for `unnest` (one array parameter per column). */
function columns<T>(rows: T[], names: Array<keyof T>): unknown[][] {
  return names.map((name) => rows.map((row) => row[name]));
}

/** Failures worth another try: the connection went (a restart, a network blip), or a serialisation clash. */
function retryable(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  if (!code) return true;
  return code.startsWith('08') || code === '57P01' || code === '40001' || code === '40P01';
}
