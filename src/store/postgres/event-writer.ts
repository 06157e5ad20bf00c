import type { CadreEvent } from '../../core/events.ts';
import { payloadHash, splitPayload } from '../payloads.ts';
import { currentOwner, type RunOwner, runsStartedHere } from '../run-owner.ts';
import { finishedEnvelope } from '../run-rows.ts';
import { safeJson } from '../safe-json.ts';
import { type Connection, type Database, transaction } from './database.ts';
import { toPgText } from './text.ts';

/** A journal entry as the journal store hands it over: its body's JSON, and a large output's apart. */
export interface JournalRow {
  journalId: string;
  runKey: string;
  kind: string;
  key: string;
  body: string;
  /** A successful tool result's output JSON (see journal-bodies.ts), stored once when large. */
  output?: string;
}

/** An attempt of a journal's tree (see JournalStore.begin). */
export interface AttemptRow {
  journalId: string;
  rootRunId: string;
  userId: string;
  spec: string;
  startedAt: number;
}

type Item =
  | { kind: 'event'; event: CadreEvent }
  | { kind: 'journal'; row: JournalRow; done?: Waiter }
  | { kind: 'attempt'; row: AttemptRow; done?: Waiter };

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
}

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

  constructor(db: Database, owner: RunOwner = currentOwner()) {
    this.#db = db;
    this.#owner = owner;
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

  async #write(connection: Connection, batch: Item[]): Promise<void> {
    const cursors = new Map<string, number>();
    const locked = new Set<string>();
    const lock = async (key: string) => {
      if (locked.has(key)) return;
      locked.add(key);
      await connection.query('SELECT pg_advisory_xact_lock(hashtext($1))', [key]);
    };
    for (const item of batch) {
      if (item.kind === 'event') {
        const event = item.event;
        const rootId = event.rootRunId || event.runId;
        let cursor = cursors.get(rootId);
        if (cursor === undefined) {
          await lock(`events:${rootId}`);
          const { rows } = await connection.query<{ last: number | null }>(
            'SELECT max(root_seq) AS last FROM events WHERE root_id = $1',
            [rootId],
          );
          cursor = rows[0]?.last ?? 0;
        }
        cursors.set(rootId, cursor + 1);
        await this.#writeEvent(connection, event, rootId, cursor + 1);
      } else if (item.kind === 'journal') {
        await lock(`journal:${item.row.journalId}`);
        await writeJournal(connection, item.row);
      } else {
        const { rootRunId, journalId, userId, spec, startedAt } = item.row;
        await connection.query(
          `INSERT INTO journal_attempts (root_run_id, journal_id, user_id, spec, started_at)
           VALUES ($1, $2, $3, $4, $5) ON CONFLICT (root_run_id) DO NOTHING`,
          [rootRunId, journalId, userId, spec, startedAt],
        );
      }
    }
  }

  async #writeEvent(
    connection: Connection,
    event: CadreEvent,
    rootId: string,
    cursor: number,
  ): Promise<void> {
    const split = splitPayload(event, PAYLOAD_THRESHOLD);
    if (split.payload)
      await connection.query('INSERT INTO payloads (hash, body) VALUES ($1, $2) ON CONFLICT DO NOTHING', [
        split.payload.hash,
        split.payload.json,
      ]);
    await connection.query(
      `INSERT INTO events (root_id, root_seq, run_id, seq, type, time, body, payload_hash)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (run_id, seq) DO NOTHING`,
      [
        rootId,
        cursor,
        event.runId,
        event.seq,
        event.type,
        event.time,
        split.body,
        split.payload?.hash ?? null,
      ],
    );
    if (event.type === 'run-start') {
      await connection.query(
        `INSERT INTO runs (id, parent_id, root_id, session_id, user_id, agent, task, model, depth, status,
           started_at, owner_pid, owner_host)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'running', $10, $11, $12) ON CONFLICT (id) DO NOTHING`,
        [
          event.runId,
          event.parentRunId,
          rootId,
          event.sessionId ?? null,
          event.userId,
          event.agent,
          toPgText(event.task),
          event.model,
          event.depth,
          event.time,
          this.#owner.pid,
          this.#owner.host,
        ],
      );
    } else if (event.type === 'run-finish') {
      await connection.query(
        'UPDATE runs SET status = $1, summary = $2, envelope = $3, ended_at = $4 WHERE id = $5',
        [event.status, toPgText(event.summary), safeJson(finishedEnvelope(event)), event.time, event.runId],
      );
    }
  }
}

/** One journal entry after the journal's last; its large output stored once, shared with its event. */
async function writeJournal(connection: Connection, row: JournalRow): Promise<void> {
  let body = row.body;
  let hash: string | null = null;
  if (row.output !== undefined && row.output.length >= PAYLOAD_THRESHOLD) {
    hash = payloadHash(row.output);
    await connection.query('INSERT INTO payloads (hash, body) VALUES ($1, $2) ON CONFLICT DO NOTHING', [
      hash,
      row.output,
    ]);
    body = '{"ok":true,"$payload":"output"}';
  }
  await connection.query(
    `INSERT INTO journal (journal_id, position, run_key, kind, key, body, payload_hash)
     VALUES ($1, (SELECT COALESCE(MAX(position), 0) + 1 FROM journal WHERE journal_id = $1), $2, $3, $4, $5, $6)
     ON CONFLICT (journal_id, run_key, kind, key) DO NOTHING`,
    [row.journalId, row.runKey, row.kind, row.key, body, hash],
  );
}

/** Failures worth another try: the connection went (a restart, a network blip), or a serialisation clash. */
function retryable(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  if (!code) return true;
  return code.startsWith('08') || code === '57P01' || code === '40001' || code === '40P01';
}
