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
import { type Database, transaction } from './database.ts';
import { toMatchExpression } from './documents/fts-query.ts';

/**
 * Sessions and their messages, keyed by user: two users' sessions of the same id are two sessions, and
 * nothing here reads another user's rows (so no answer differs for an id someone else uses). Every
 * message is committed when it is appended, never batched: an accepted message survives a crash.
 */
export class SqliteSessionStore implements SessionStore {
  #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async create(userId: string, options: { id?: string; title?: string } = {}): Promise<SessionSummary> {
    const now = Date.now();
    const id = options.id ?? `ses_${randomUUID()}`;
    if (this.#db.prepare('SELECT 1 FROM sessions WHERE user_id = ? AND id = ?').get(userId, id)) {
      throw new UserError('session_exists', `You already have a session "${id}".`, { sessionId: id });
    }
    this.#db
      .prepare('INSERT INTO sessions (id, user_id, title, created_at, updated_at) VALUES (?, ?, ?, ?, ?)')
      .run(id, userId, options.title ?? '', now, now);
    return { id, title: options.title ?? '', createdAt: iso(now), updatedAt: iso(now) };
  }

  /** The session if it exists and belongs to `userId`. */
  async get(userId: string, id: string): Promise<Session | undefined> {
    const row = this.#db
      .prepare('SELECT id, title, created_at, updated_at FROM sessions WHERE user_id = ? AND id = ?')
      .get(userId, id) as Record<string, any> | undefined;
    if (!row) return undefined;
    const messages = (
      this.#db
        .prepare(
          'SELECT id, role, content, parts, metadata, run_id, created_at FROM messages WHERE user_id = ? AND session_id = ? ORDER BY seq',
        )
        .all(userId, id) as Array<Record<string, any>>
    ).map(storedMessage);
    const versions = (
      this.#db
        .prepare(
          'SELECT id, after_id, messages, replaced_at FROM message_versions WHERE user_id = ? AND session_id = ? ORDER BY replaced_at, rowid',
        )
        .all(userId, id) as Array<Record<string, any>>
    ).map(messageVersion);
    return { ...sessionSummary(row), messages, versions };
  }

  async list(userId: string, options: { limit?: number } = {}): Promise<SessionSummary[]> {
    const limit = options.limit ?? 100;
    return (
      this.#db
        .prepare(
          'SELECT id, title, created_at, updated_at FROM sessions WHERE user_id = ? ORDER BY updated_at DESC LIMIT ?',
        )
        .all(userId, limit) as Array<Record<string, any>>
    ).map(sessionSummary);
  }

  async searchMessages(
    userId: string,
    query: string,
    options: { limit?: number } = {},
  ): Promise<MessageMatch[]> {
    const match = toMatchExpression(query);
    if (!match) return [];
    const rows = this.#db
      .prepare(
        `SELECT f.session_id, f.message_id, s.title, m.role, m.created_at,
                snippet(message_search, 3, '', '', '…', 16) AS line
           FROM message_search f
           JOIN messages m ON m.user_id = f.user_id AND m.session_id = f.session_id AND m.id = f.message_id
           JOIN sessions s ON s.user_id = f.user_id AND s.id = f.session_id
          WHERE message_search MATCH ? AND f.user_id = ?
          ORDER BY rank LIMIT ?`,
      )
      .all(match, userId, options.limit ?? 20) as Array<Record<string, any>>;
    return rows.map((row) => ({
      sessionId: row.session_id,
      sessionTitle: row.title,
      messageId: row.message_id,
      role: row.role,
      line: String(row.line).replace(/\s+/g, ' ').trim(),
      createdAt: iso(row.created_at),
    }));
  }

  async append(userId: string, sessionId: string, message: NewMessage): Promise<StoredMessage> {
    // One write transaction: two processes appending at once cannot take the same place in the session.
    return transaction(this.#db, () => this.#insert(userId, sessionId, message));
  }

  async appendReply(
    userId: string,
    sessionId: string,
    question: { id: string; createdAt: string },
    message: NewMessage,
  ): Promise<StoredMessage | undefined> {
    // One write transaction: another process's resend cannot remove the question between the look and
    // the insert.
    return transaction(this.#db, () => {
      this.#owned(userId, sessionId);
      const row = this.#db
        .prepare('SELECT created_at FROM messages WHERE user_id = ? AND session_id = ? AND id = ?')
        .get(userId, sessionId, question.id) as { created_at: number } | undefined;
      return row && iso(row.created_at) === question.createdAt
        ? this.#insert(userId, sessionId, message)
        : undefined;
    });
  }

  #insert(userId: string, sessionId: string, message: NewMessage): StoredMessage {
    const owner = this.#owned(userId, sessionId);
    const now = Date.now();
    const id = message.id ?? `msg_${randomUUID()}`;
    const next = this.#db
      .prepare('SELECT COALESCE(MAX(seq), -1) + 1 AS seq FROM messages WHERE user_id = ? AND session_id = ?')
      .get(userId, sessionId) as { seq: number };
    this.#db
      .prepare(
        'INSERT INTO messages (user_id, session_id, id, seq, role, content, parts, metadata, run_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        userId,
        sessionId,
        id,
        next.seq,
        message.role,
        message.content,
        message.parts === undefined ? null : JSON.stringify(message.parts),
        message.metadata === undefined ? null : JSON.stringify(message.metadata),
        message.runId ?? null,
        now,
      );
    const title = owner.title || (message.role === 'user' ? sessionTitle(message.content) : '');
    this.#db
      .prepare('UPDATE sessions SET updated_at = ?, title = ? WHERE user_id = ? AND id = ?')
      .run(now, title, userId, sessionId);
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

  async removeFrom(
    userId: string,
    sessionId: string,
    messageId: string,
    options: { keep?: boolean } = {},
  ): Promise<number> {
    return transaction(this.#db, () => {
      const owner = this.#owned(userId, sessionId);
      const from = this.#db
        .prepare('SELECT seq, content FROM messages WHERE user_id = ? AND session_id = ? AND id = ?')
        .get(userId, sessionId, messageId) as { seq: number; content: string } | undefined;
      if (!from) return 0;
      const first = this.#db
        .prepare('SELECT MIN(seq) AS seq FROM messages WHERE user_id = ? AND session_id = ?')
        .get(userId, sessionId) as { seq: number };
      const removed = this.#removeFromSeq(userId, sessionId, from.seq, options.keep === true);
      // Its first question went (edited): the next one titles the session again, as the first did, unless
      // the person gave the session a title of their own.
      const retitle = from.seq === first.seq && owner.title === sessionTitle(from.content);
      this.#db
        .prepare(
          `UPDATE sessions SET updated_at = ?${retitle ? ", title = ''" : ''} WHERE user_id = ? AND id = ?`,
        )
        .run(Date.now(), userId, sessionId);
      return removed;
    });
  }

  async restoreVersion(userId: string, sessionId: string, versionId: string): Promise<boolean> {
    return transaction(this.#db, () => {
      this.#owned(userId, sessionId);
      const version = this.#db
        .prepare(
          'SELECT id, after_id, messages, replaced_at FROM message_versions WHERE user_id = ? AND session_id = ? AND id = ?',
        )
        .get(userId, sessionId, versionId) as Record<string, any> | undefined;
      if (!version) return false;
      let from = 0;
      if (version.after_id !== null) {
        const after = this.#db
          .prepare('SELECT seq FROM messages WHERE user_id = ? AND session_id = ? AND id = ?')
          .get(userId, sessionId, version.after_id) as { seq: number } | undefined;
        if (!after) return false;
        from = after.seq + 1;
      }
      const next = this.#db
        .prepare(
          'SELECT id FROM messages WHERE user_id = ? AND session_id = ? AND seq >= ? ORDER BY seq LIMIT 1',
        )
        .get(userId, sessionId, from) as { id: string } | undefined;
      this.#db
        .prepare('DELETE FROM message_versions WHERE user_id = ? AND session_id = ? AND id = ?')
        .run(userId, sessionId, versionId);
      if (next) {
        const answered = this.#db
          .prepare(
            "SELECT 1 FROM messages WHERE user_id = ? AND session_id = ? AND seq >= ? AND role = 'assistant' LIMIT 1",
          )
          .get(userId, sessionId, from);
        // The restored messages reuse ids: what they replace leaves first.
        this.#removeFromSeq(userId, sessionId, from, Boolean(answered));
      }
      const restore = this.#db.prepare(
        'INSERT INTO messages (user_id, session_id, id, seq, role, content, parts, metadata, run_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      );
      let seq = from;
      for (const message of messageVersion(version).messages) {
        restore.run(
          userId,
          sessionId,
          message.id,
          seq++,
          message.role,
          message.content,
          message.parts === undefined ? null : JSON.stringify(message.parts),
          message.metadata === undefined ? null : JSON.stringify(message.metadata),
          message.runId ?? null,
          Date.parse(message.createdAt),
        );
      }
      this.#db
        .prepare('UPDATE sessions SET updated_at = ? WHERE user_id = ? AND id = ?')
        .run(Date.now(), userId, sessionId);
      return true;
    });
  }

  /** Deletes the messages from `seq` on, kept first as a version when `keep`. */
  #removeFromSeq(userId: string, sessionId: string, seq: number, keep: boolean): number {
    if (keep) {
      const replaced = (
        this.#db
          .prepare(
            'SELECT id, role, content, parts, metadata, run_id, created_at FROM messages WHERE user_id = ? AND session_id = ? AND seq >= ? ORDER BY seq',
          )
          .all(userId, sessionId, seq) as Array<Record<string, any>>
      ).map(storedMessage);
      const before = this.#db
        .prepare(
          'SELECT id FROM messages WHERE user_id = ? AND session_id = ? AND seq < ? ORDER BY seq DESC LIMIT 1',
        )
        .get(userId, sessionId, seq) as { id: string } | undefined;
      this.#db
        .prepare(
          'INSERT INTO message_versions (user_id, session_id, id, after_id, messages, replaced_at) VALUES (?, ?, ?, ?, ?, ?)',
        )
        .run(
          userId,
          sessionId,
          `ver_${randomUUID()}`,
          before?.id ?? null,
          JSON.stringify(replaced),
          Date.now(),
        );
    }
    return Number(
      this.#db
        .prepare('DELETE FROM messages WHERE user_id = ? AND session_id = ? AND seq >= ?')
        .run(userId, sessionId, seq).changes,
    );
  }

  /** The caller's session's row; `unknown_session` when the caller has none by that id. */
  #owned(userId: string, sessionId: string): { title: string } {
    const owner = this.#db
      .prepare('SELECT title FROM sessions WHERE user_id = ? AND id = ?')
      .get(userId, sessionId) as { title: string } | undefined;
    if (!owner) {
      throw new UserError('unknown_session', `There is no session "${sessionId}".`, { sessionId });
    }
    return owner;
  }

  async rename(userId: string, id: string, title: string): Promise<boolean> {
    const renamed = this.#db
      .prepare('UPDATE sessions SET title = ? WHERE user_id = ? AND id = ?')
      .run(title, userId, id);
    return renamed.changes > 0;
  }

  async delete(userId: string, id: string): Promise<boolean> {
    return this.#db.prepare('DELETE FROM sessions WHERE user_id = ? AND id = ?').run(userId, id).changes > 0;
  }
}
