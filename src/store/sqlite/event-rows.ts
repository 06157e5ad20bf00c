import type { StatementSync } from 'node:sqlite';
import type { CadreEvent } from '../../core/events.ts';
import { payloadHash, type SplitEvent, splitPayload } from '../payloads.ts';
import type { RunOwner } from '../run-owner.ts';
import { finishedEnvelope } from '../run-rows.ts';
import { safeJson } from '../safe-json.ts';
import type { AttemptRow, JournalEntryRow } from '../sql/journal-store.ts';
import type { Database } from './database.ts';

/** One journal entry, placed after the journal's last. */
const JOURNAL_INSERT_SQL = `INSERT OR IGNORE INTO journal (journal_id, position, run_key, kind, key, body, payload_hash)
  VALUES (?, (SELECT COALESCE(MAX(position), 0) + 1 FROM journal WHERE journal_id = ?), ?, ?, ?, ?, ?)`;

/** One attempt, recorded once (a spool applied twice, or a second `begin`, changes nothing). */
const ATTEMPT_INSERT_SQL =
  'INSERT OR IGNORE INTO journal_attempts (root_run_id, journal_id, user_id, spec, started_at) VALUES (?, ?, ?, ?, ?)';

/** A journal entry (see sql/journal-store.ts), secured the moment it is put. */
export type JournalEntry = JournalEntryRow;

/** An attempt of a journal's tree (see JournalStore.begin), secured with its root run's start. */
export type JournalAttempt = AttemptRow;

/**
 * The rows an event, a journal entry or an attempt becomes, written inside the caller's transaction (see
 * event-writer.ts): the event with its tree's next cursor, its large output once under its hash, and the
 * `runs` row a run's start creates and its finish completes.
 */
export class EventRows {
  #insertEvent: StatementSync;
  #insertPayload: StatementSync;
  #insertJournal: StatementSync;
  #insertAttempt: StatementSync;
  #eventExists: StatementSync;
  #insertRun: StatementSync;
  #finishRun: StatementSync;
  #lastCursor: StatementSync;
  /** The last cursor given in each tree still running; a tree forgets its entry when its root finishes. */
  #cursors = new Map<string, number>();
  #owner: RunOwner;
  #threshold: number;

  constructor(db: Database, owner: RunOwner, payloadThreshold: number) {
    this.#owner = owner;
    this.#threshold = payloadThreshold;
    this.#insertJournal = db.prepare(JOURNAL_INSERT_SQL);
    this.#insertAttempt = db.prepare(ATTEMPT_INSERT_SQL);
    this.#eventExists = db.prepare('SELECT 1 FROM events WHERE run_id = ? AND seq = ?');
    this.#insertEvent = db.prepare(
      `INSERT OR IGNORE INTO events (run_id, root_id, seq, type, time, body, root_seq, payload_hash)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#insertPayload = db.prepare('INSERT OR IGNORE INTO payloads (hash, body) VALUES (?, ?)');
    this.#insertRun = db.prepare(
      `INSERT OR IGNORE INTO runs (id, parent_id, root_id, session_id, user_id, agent, task, model, depth, status, started_at, owner_pid, owner_host)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?)`,
    );
    this.#finishRun = db.prepare(
      'UPDATE runs SET status = ?, summary = ?, envelope = ?, ended_at = ? WHERE id = ?',
    );
    this.#lastCursor = db.prepare('SELECT max(root_seq) AS last FROM events WHERE root_id = ?');
  }

  /** Splits an event's large output out of its row (see payloads.ts) with this writer's threshold. */
  split(event: CadreEvent): SplitEvent {
    return splitPayload(event, this.#threshold);
  }

  /** Forgets the cursor handed out in `event`'s tree: a rolled-back transaction did not store it. */
  forgetCursor(event: CadreEvent): void {
    this.#cursors.delete(event.rootRunId || event.runId);
  }

  writeJournal(entry: JournalEntry): void {
    const { journalId, runKey, kind, key, body, output } = entry;
    if (output === undefined || output.length < this.#threshold) {
      this.#insertJournal.run(journalId, journalId, runKey, kind, key, body, null);
      return;
    }
    const hash = payloadHash(output);
    this.#insertPayload.run(hash, output);
    this.#insertJournal.run(journalId, journalId, runKey, kind, key, '{"ok":true,"$payload":"output"}', hash);
  }

  writeAttempt(attempt: JournalAttempt): void {
    const { rootRunId, journalId, userId, spec, startedAt } = attempt;
    this.#insertAttempt.run(rootRunId, journalId, userId, spec, startedAt);
  }

  /**
   * Writes one event; `replayed` (from a dead process's spool) skips an event the table already has. `json`
   * is the event's JSON when it was made already (spooled): shorter than the threshold, none of its fields
   * can be, and it is the row's body as it stands.
   */
  writeEvent(event: CadreEvent, json: string | undefined, replayed: boolean): void {
    // Only a replayed spool can hold an event the table has; a cursor is given once the row is new.
    if (replayed && this.#eventExists.get(event.runId, event.seq)) return;
    const rootId = event.rootRunId || event.runId;
    const cursor = this.#nextCursor(rootId);
    const split = json !== undefined && json.length < this.#threshold ? { body: json } : this.split(event);
    if (split.payload) this.#insertPayload.run(split.payload.hash, split.payload.json);
    const { changes } = this.#insertEvent.run(
      event.runId,
      rootId,
      event.seq,
      event.type,
      event.time,
      split.body,
      cursor,
      split.payload?.hash ?? null,
    );
    // Recorded again (a run going on from its journal replays its events): its cursor is given back, so
    // the tree's cursors stay gapless, as a process following it numbers the events it reads.
    if (!changes) this.#cursors.set(rootId, cursor - 1);
    if (event.type === 'run-start') {
      this.#insertRun.run(
        event.runId,
        event.parentRunId,
        rootId,
        event.sessionId ?? null,
        event.userId,
        event.agent,
        event.task,
        event.model,
        event.depth,
        event.time,
        this.#owner.pid,
        this.#owner.host,
      );
    } else if (event.type === 'run-finish') {
      this.#finishRun.run(
        event.status,
        event.summary,
        safeJson(finishedEnvelope(event)),
        event.time,
        event.runId,
      );
      if (event.parentRunId === null) this.#cursors.delete(rootId);
    }
  }

  #nextCursor(rootId: string): number {
    let last = this.#cursors.get(rootId);
    if (last === undefined) {
      const row = this.#lastCursor.get(rootId) as { last: number | null };
      last = row.last ?? 0;
    }
    this.#cursors.set(rootId, last + 1);
    return last + 1;
  }
}
