import { randomUUID } from 'node:crypto';
import { UserError } from '../../core/errors.ts';
import { sessionTitle } from '../../core/session-title.ts';
import { iso, messageVersion, sessionSummary, storedMessage } from '../run-rows.ts';
import type {
  MessageMatch,
  NewMessage,
  Session,
  SessionStore,
  SessionSummary,
  StoredMessage,
} from '../store.ts';
import { type ChangeSignal, LocalSignal } from './change-signal.ts';
import { changes, row, rows, type SqlDatabase, type SqlDialect, type Transaction } from './sql-database.ts';

type Row = Record<string, any>;

const MESSAGE_COLUMNS = 'id, role, content, parts, metadata, run_id, created_at';
const INSERT_MESSAGE = `INSERT INTO messages (user_id, session_id, id, seq, role, content, parts, metadata, run_id, created_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/**
 * Sessions and their messages, keyed by user: two users' sessions of the same id are two sessions, and
 * nothing here reads another user's rows (so no answer differs for an id someone else uses). Every
 * message is committed when it is appended, never batched: an accepted message survives a crash. A write
 * to a session is one transaction that reads the session's row first (locked where the dialect locks
 * rows), so two processes appending at once take their places in turn. Each write announces that chat
 * lists changed (`lists`: the backend's signal, heard by the other processes on the store too).
 */
export class SqlSessionStore implements SessionStore {
  readonly #db: SqlDatabase;
  readonly #dialect: SqlDialect;
  readonly #lists: ChangeSignal;

  constructor(db: SqlDatabase, lists: ChangeSignal = new LocalSignal()) {
    this.#db = db;
    this.#dialect = db.dialect;
    this.#lists = lists;
  }

  watchLists(onChange: () => void): () => void {
    return this.#lists.watch(onChange);
  }

  /** `written`, once it has been: chat lists are told (whatever it did; a look for nothing is cheap). */
  async #announced<T>(written: Promise<T>): Promise<T> {
    const value = await written;
    this.#lists.announce();
    return value;
  }

  create(userId: string, options: { id?: string; title?: string } = {}): Promise<SessionSummary> {
    return this.#announced(this.#create(userId, options));
  }

  async #create(userId: string, options: { id?: string; title?: string }): Promise<SessionSummary> {
    const now = Date.now();
    const id = options.id ?? `ses_${randomUUID()}`;
    const title = options.title ?? '';
    const inserted = await this.#db.run(
      `INSERT INTO sessions (id, user_id, title, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT DO NOTHING`,
      [id, userId, this.#dialect.storedText(title), now, now],
    );
    if (!inserted)
      throw new UserError('session_exists', `You already have a session "${id}".`, { sessionId: id });
    return { id, title, createdAt: iso(now), updatedAt: iso(now) };
  }

  /** The session if it exists and belongs to `userId`. */
  async get(userId: string, id: string): Promise<Session | undefined> {
    const session = await this.#db.one<Row>(
      'SELECT id, title, created_at, updated_at FROM sessions WHERE user_id = ? AND id = ?',
      [userId, id],
    );
    if (!session) return undefined;
    const messages = await this.#db.all<Row>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE user_id = ? AND session_id = ? ORDER BY seq`,
      [userId, id],
    );
    const versions = await this.#db.all<Row>(
      `SELECT id, after_id, messages, replaced_at FROM message_versions WHERE user_id = ? AND session_id = ?
       ORDER BY replaced_at, ${this.#dialect.rowid ?? 'id'}`,
      [userId, id],
    );
    return {
      ...this.#summary(session),
      messages: messages.map((message) => this.#message(message)),
      versions: versions.map(messageVersion),
    };
  }

  async list(userId: string, options: { limit?: number } = {}): Promise<SessionSummary[]> {
    const sessions = await this.#db.all<Row>(
      'SELECT id, title, created_at, updated_at FROM sessions WHERE user_id = ? ORDER BY updated_at DESC LIMIT ?',
      [userId, options.limit ?? 100],
    );
    return sessions.map((session) => this.#summary(session));
  }

  async searchMessages(
    userId: string,
    query: string,
    options: { limit?: number } = {},
  ): Promise<MessageMatch[]> {
    const search = this.#dialect.messageSearch(userId, query, options.limit ?? 20);
    if (!search) return [];
    const found = await this.#db.all<Row>(search.sql, search.params);
    return found.map((match) => ({
      sessionId: match.session_id,
      sessionTitle: this.#dialect.readText(match.title),
      messageId: match.message_id,
      role: match.role,
      line: this.#dialect.readText(String(match.line)).replace(/\s+/g, ' ').trim(),
      createdAt: iso(match.created_at),
    }));
  }

  append(userId: string, sessionId: string, message: NewMessage): Promise<StoredMessage> {
    return this.#announced(this.#db.transaction(() => this.#append(userId, sessionId, message)));
  }

  *#append(userId: string, sessionId: string, message: NewMessage): Transaction<StoredMessage> {
    return yield* this.#insert(yield* this.#owned(userId, sessionId), userId, sessionId, message);
  }

  appendReply(
    userId: string,
    sessionId: string,
    question: { id: string; createdAt: string },
    message: NewMessage,
  ): Promise<StoredMessage | undefined> {
    // Another process's resend cannot remove the question between the look and the insert.
    return this.#announced(
      this.#db.transaction(() => this.#appendReply(userId, sessionId, question, message)),
    );
  }

  *#appendReply(
    userId: string,
    sessionId: string,
    question: { id: string; createdAt: string },
    message: NewMessage,
  ): Transaction<StoredMessage | undefined> {
    const owner = yield* this.#owned(userId, sessionId);
    const asked = yield* row<{ created_at: number }>(
      'SELECT created_at FROM messages WHERE user_id = ? AND session_id = ? AND id = ?',
      [userId, sessionId, question.id],
    );
    if (!asked || iso(asked.created_at) !== question.createdAt) return undefined;
    return yield* this.#insert(owner, userId, sessionId, message);
  }

  *#insert(
    owner: { title: string },
    userId: string,
    sessionId: string,
    message: NewMessage,
  ): Transaction<StoredMessage> {
    const now = Date.now();
    const id = message.id ?? `msg_${randomUUID()}`;
    const next = yield* row<{ seq: number }>(
      'SELECT COALESCE(MAX(seq), -1) + 1 AS seq FROM messages WHERE user_id = ? AND session_id = ?',
      [userId, sessionId],
    );
    yield* changes(
      INSERT_MESSAGE,
      this.#messageValues(userId, sessionId, { ...message, id, createdAt: iso(now) }, next!.seq),
    );
    // The session's first question titles it, unless the person gave it a title of their own.
    const title = owner.title || (message.role === 'user' ? sessionTitle(message.content) : '');
    yield* changes('UPDATE sessions SET updated_at = ?, title = ? WHERE user_id = ? AND id = ?', [
      now,
      this.#dialect.storedText(title),
      userId,
      sessionId,
    ]);
    return {
      id,
      role: message.role,
      content: message.content,
      ...(message.parts === undefined ? {} : { parts: message.parts }),
      ...(message.metadata === undefined ? {} : { metadata: message.metadata }),
      ...(message.runId ? { runId: message.runId } : {}),
      createdAt: iso(now),
    };
  }

  removeFrom(
    userId: string,
    sessionId: string,
    messageId: string,
    options: { keep?: boolean } = {},
  ): Promise<number> {
    return this.#announced(
      this.#db.transaction(() => this.#removeFrom(userId, sessionId, messageId, options.keep === true)),
    );
  }

  *#removeFrom(userId: string, sessionId: string, messageId: string, keep: boolean): Transaction<number> {
    const owner = yield* this.#owned(userId, sessionId);
    const from = yield* row<{ seq: number; first: number; content: string }>(
      `SELECT m.seq, m.content, (SELECT MIN(seq) FROM messages WHERE user_id = ? AND session_id = ?) AS first
       FROM messages m WHERE m.user_id = ? AND m.session_id = ? AND m.id = ?`,
      [userId, sessionId, userId, sessionId, messageId],
    );
    if (!from) return 0;
    const removed = yield* this.#removeFromSeq(userId, sessionId, from.seq, keep);
    // Its first question went (edited): the next one titles the session again, as the first did, unless
    // the person gave the session a title of their own.
    const retitle =
      from.seq === from.first && owner.title === sessionTitle(this.#dialect.readText(from.content));
    yield* changes(
      `UPDATE sessions SET updated_at = ?${retitle ? ", title = ''" : ''} WHERE user_id = ? AND id = ?`,
      [Date.now(), userId, sessionId],
    );
    return removed;
  }

  restoreVersion(userId: string, sessionId: string, versionId: string): Promise<boolean> {
    return this.#announced(this.#db.transaction(() => this.#restoreVersion(userId, sessionId, versionId)));
  }

  *#restoreVersion(userId: string, sessionId: string, versionId: string): Transaction<boolean> {
    yield* this.#owned(userId, sessionId);
    const version = yield* row<Row>(
      'SELECT id, after_id, messages, replaced_at FROM message_versions WHERE user_id = ? AND session_id = ? AND id = ?',
      [userId, sessionId, versionId],
    );
    if (!version) return false;
    let from = 0;
    if (version.after_id !== null) {
      const after = yield* row<{ seq: number }>(
        'SELECT seq FROM messages WHERE user_id = ? AND session_id = ? AND id = ?',
        [userId, sessionId, version.after_id],
      );
      if (!after) return false;
      from = after.seq + 1;
    }
    yield* changes('DELETE FROM message_versions WHERE user_id = ? AND session_id = ? AND id = ?', [
      userId,
      sessionId,
      versionId,
    ]);
    const answered = yield* row(
      "SELECT 1 FROM messages WHERE user_id = ? AND session_id = ? AND seq >= ? AND role = 'assistant' LIMIT 1",
      [userId, sessionId, from],
    );
    // The restored messages reuse ids: what they replace leaves first (kept as a version once answered).
    yield* this.#removeFromSeq(userId, sessionId, from, answered !== undefined);
    let seq = from;
    for (const message of messageVersion(version).messages)
      yield* changes(INSERT_MESSAGE, this.#messageValues(userId, sessionId, message, seq++));
    yield* changes('UPDATE sessions SET updated_at = ? WHERE user_id = ? AND id = ?', [
      Date.now(),
      userId,
      sessionId,
    ]);
    return true;
  }

  /** Deletes the session's messages from `seq` on, kept first as a version when `keep`; how many went. */
  *#removeFromSeq(userId: string, sessionId: string, seq: number, keep: boolean): Transaction<number> {
    if (keep) {
      const replaced = yield* rows<Row>(
        `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE user_id = ? AND session_id = ? AND seq >= ? ORDER BY seq`,
        [userId, sessionId, seq],
      );
      const before = yield* row<{ id: string }>(
        'SELECT id FROM messages WHERE user_id = ? AND session_id = ? AND seq < ? ORDER BY seq DESC LIMIT 1',
        [userId, sessionId, seq],
      );
      yield* changes(
        'INSERT INTO message_versions (user_id, session_id, id, after_id, messages, replaced_at) VALUES (?, ?, ?, ?, ?, ?)',
        [
          userId,
          sessionId,
          `ver_${randomUUID()}`,
          before?.id ?? null,
          JSON.stringify(replaced.map((message) => this.#message(message))),
          Date.now(),
        ],
      );
    }
    return yield* changes('DELETE FROM messages WHERE user_id = ? AND session_id = ? AND seq >= ?', [
      userId,
      sessionId,
      seq,
    ]);
  }

  /** The caller's session's row, locked; `unknown_session` when the caller has none by that id. */
  *#owned(userId: string, sessionId: string): Transaction<{ title: string }> {
    const owner = yield* row<{ title: string }>(
      `SELECT title FROM sessions WHERE user_id = ? AND id = ?${this.#dialect.lockRow}`,
      [userId, sessionId],
    );
    if (!owner) throw new UserError('unknown_session', `There is no session "${sessionId}".`, { sessionId });
    return { title: this.#dialect.readText(owner.title) };
  }

  async rename(userId: string, id: string, title: string): Promise<boolean> {
    const renamed = await this.#announced(
      this.#db.run('UPDATE sessions SET title = ? WHERE user_id = ? AND id = ?', [
        this.#dialect.storedText(title),
        userId,
        id,
      ]),
    );
    return renamed > 0;
  }

  async delete(userId: string, id: string): Promise<boolean> {
    return (
      (await this.#announced(
        this.#db.run('DELETE FROM sessions WHERE user_id = ? AND id = ?', [userId, id]),
      )) > 0
    );
  }

  /** A message's values for `INSERT_MESSAGE`, at place `seq`. */
  #messageValues(
    userId: string,
    sessionId: string,
    message: Omit<StoredMessage, 'id'> & { id: string },
    seq: number,
  ): unknown[] {
    return [
      userId,
      sessionId,
      message.id,
      seq,
      message.role,
      this.#dialect.storedText(message.content),
      message.parts === undefined ? null : JSON.stringify(message.parts),
      message.metadata === undefined ? null : JSON.stringify(message.metadata),
      message.runId ?? null,
      Date.parse(message.createdAt),
    ];
  }

  #message(message: Row): StoredMessage {
    return storedMessage({ ...message, content: this.#dialect.readText(message.content) });
  }

  #summary(session: Row): SessionSummary {
    return sessionSummary({ ...session, title: this.#dialect.readText(session.title) });
  }
}
