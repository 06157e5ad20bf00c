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
import { type Connection, type Database, Params, transaction } from './database.ts';
import { toTsQuery } from './documents/ts-query.ts';
import { decoded, fromPgText, toPgText } from './text.ts';

/**
 * Sessions and their messages, keyed by user: two users' sessions of the same id are two sessions, and
 * nothing here reads another user's rows (so no answer differs for an id someone else uses). Every
 * message is committed when it is appended. A write to a session locks its row first (`FOR UPDATE`), so
 * two processes appending at once take their places in turn.
 */
export class PostgresSessionStore implements SessionStore {
  #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async create(userId: string, options: { id?: string; title?: string } = {}): Promise<SessionSummary> {
    const now = Date.now();
    const id = options.id ?? `ses_${randomUUID()}`;
    const { rowCount } = await this.#db.query(
      `INSERT INTO sessions (id, user_id, title, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)
       ON CONFLICT (user_id, id) DO NOTHING`,
      [id, userId, toPgText(options.title ?? ''), now],
    );
    if (!rowCount)
      throw new UserError('session_exists', `You already have a session "${id}".`, { sessionId: id });
    return { id, title: options.title ?? '', createdAt: iso(now), updatedAt: iso(now) };
  }

  async get(userId: string, id: string): Promise<Session | undefined> {
    const { rows } = await this.#db.query(
      'SELECT id, title, created_at, updated_at FROM sessions WHERE user_id = $2 AND id = $1',
      [id, userId],
    );
    if (!rows[0]) return undefined;
    const { rows: messages } = await this.#db.query(
      `SELECT id, role, content, parts, metadata, run_id, created_at FROM messages
       WHERE user_id = $2 AND session_id = $1 ORDER BY seq`,
      [id, userId],
    );
    const { rows: versions } = await this.#db.query(
      `SELECT id, after_id, messages, replaced_at FROM message_versions
       WHERE user_id = $2 AND session_id = $1 ORDER BY replaced_at, id`,
      [id, userId],
    );
    return {
      ...sessionSummary(decoded(rows[0], ['title'])),
      messages: messages.map((message) => storedMessage(decoded(message, ['content']))),
      versions: versions.map(messageVersion),
    };
  }

  async list(userId: string, options: { limit?: number } = {}): Promise<SessionSummary[]> {
    const { rows } = await this.#db.query(
      'SELECT id, title, created_at, updated_at FROM sessions WHERE user_id = $1 ORDER BY updated_at DESC LIMIT $2',
      [userId, options.limit ?? 100],
    );
    return rows.map((row) => sessionSummary(decoded(row, ['title'])));
  }

  async searchMessages(
    userId: string,
    query: string,
    options: { limit?: number } = {},
  ): Promise<MessageMatch[]> {
    const params = new Params();
    const tsquery = toTsQuery(query, 'all', params);
    if (!tsquery) return [];
    const user = params.add(userId);
    const limit = params.add(options.limit ?? 20);
    const { rows } = await this.#db.query(
      `SELECT m.session_id, m.id AS message_id, s.title, m.role, m.created_at,
              ts_headline('english', m.content, query.q, 'StartSel="", StopSel="", MaxWords=24, MinWords=12, MaxFragments=1') AS line
         FROM (SELECT ${tsquery} AS q) AS query
         JOIN messages m ON m.search @@ query.q
         JOIN sessions s ON s.user_id = m.user_id AND s.id = m.session_id
        WHERE m.user_id = ${user}
        ORDER BY ts_rank(m.search, query.q) DESC, m.created_at DESC
        LIMIT ${limit}`,
      params.values,
    );
    return rows.map((row) => ({
      sessionId: row.session_id,
      sessionTitle: fromPgText(row.title),
      messageId: row.message_id,
      role: row.role,
      line: fromPgText(String(row.line)).replace(/\s+/g, ' ').trim(),
      createdAt: iso(Number(row.created_at)),
    }));
  }

  append(userId: string, sessionId: string, message: NewMessage): Promise<StoredMessage> {
    return transaction(this.#db, async (connection) =>
      insert(connection, await owned(connection, userId, sessionId), userId, sessionId, message),
    );
  }

  appendReply(
    userId: string,
    sessionId: string,
    question: { id: string; createdAt: string },
    message: NewMessage,
  ): Promise<StoredMessage | undefined> {
    return transaction(this.#db, async (connection) => {
      const owner = await owned(connection, userId, sessionId);
      const { rows } = await connection.query<{ created_at: number }>(
        'SELECT created_at FROM messages WHERE user_id = $3 AND session_id = $2 AND id = $1',
        [question.id, sessionId, userId],
      );
      return rows[0] && iso(rows[0].created_at) === question.createdAt
        ? insert(connection, owner, userId, sessionId, message)
        : undefined;
    });
  }

  removeFrom(
    userId: string,
    sessionId: string,
    messageId: string,
    options: { keep?: boolean } = {},
  ): Promise<number> {
    return transaction(this.#db, async (connection) => {
      const owner = await owned(connection, userId, sessionId);
      const { rows } = await connection.query<{ seq: number; first: number; content: string }>(
        `SELECT m.seq, m.content, (SELECT min(seq) FROM messages WHERE user_id = $3 AND session_id = $2) AS first
         FROM messages m WHERE m.user_id = $3 AND m.session_id = $2 AND m.id = $1`,
        [messageId, sessionId, userId],
      );
      const from = rows[0];
      if (!from) return 0;
      const removed = await removeFromSeq(connection, userId, sessionId, from.seq, options.keep === true);
      // Its first question went (edited): the next one titles the session again, as the first did, unless
      // the person gave the session a title of their own.
      const retitle = from.seq === from.first && owner.title === sessionTitle(fromPgText(from.content));
      await connection.query(
        `UPDATE sessions SET updated_at = $1${retitle ? ", title = ''" : ''} WHERE user_id = $3 AND id = $2`,
        [Date.now(), sessionId, userId],
      );
      return removed;
    });
  }

  restoreVersion(userId: string, sessionId: string, versionId: string): Promise<boolean> {
    return transaction(this.#db, async (connection) => {
      await owned(connection, userId, sessionId);
      const { rows: versions } = await connection.query(
        `SELECT id, after_id, messages, replaced_at FROM message_versions
         WHERE user_id = $1 AND session_id = $2 AND id = $3`,
        [userId, sessionId, versionId],
      );
      const version = versions[0];
      if (!version) return false;
      let from = 0;
      if (version.after_id !== null) {
        const { rows } = await connection.query<{ seq: number }>(
          'SELECT seq FROM messages WHERE user_id = $1 AND session_id = $2 AND id = $3',
          [userId, sessionId, version.after_id],
        );
        if (!rows[0]) return false;
        from = Number(rows[0].seq) + 1;
      }
      await connection.query(
        'DELETE FROM message_versions WHERE user_id = $1 AND session_id = $2 AND id = $3',
        [userId, sessionId, versionId],
      );
      const { rows: answered } = await connection.query(
        `SELECT 1 FROM messages WHERE user_id = $1 AND session_id = $2 AND seq >= $3 AND role = 'assistant' LIMIT 1`,
        [userId, sessionId, from],
      );
      // The restored messages reuse ids: what they replace leaves first.
      await removeFromSeq(connection, userId, sessionId, from, answered.length > 0);
      let seq = from;
      for (const message of messageVersion(version).messages) {
        await connection.query(
          `INSERT INTO messages (user_id, session_id, id, seq, role, content, parts, metadata, run_id, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
          [
            userId,
            sessionId,
            message.id,
            seq++,
            message.role,
            toPgText(message.content),
            message.parts === undefined ? null : JSON.stringify(message.parts),
            message.metadata === undefined ? null : JSON.stringify(message.metadata),
            message.runId ?? null,
            Date.parse(message.createdAt),
          ],
        );
      }
      await connection.query('UPDATE sessions SET updated_at = $1 WHERE user_id = $2 AND id = $3', [
        Date.now(),
        userId,
        sessionId,
      ]);
      return true;
    });
  }

  async rename(userId: string, id: string, title: string): Promise<boolean> {
    const { rowCount } = await this.#db.query(
      'UPDATE sessions SET title = $1 WHERE user_id = $3 AND id = $2',
      [toPgText(title), id, userId],
    );
    return (rowCount ?? 0) > 0;
  }

  async delete(userId: string, id: string): Promise<boolean> {
    const { rowCount } = await this.#db.query('DELETE FROM sessions WHERE user_id = $2 AND id = $1', [
      id,
      userId,
    ]);
    return (rowCount ?? 0) > 0;
  }
}

/** Deletes the session's messages from `seq` on, kept first as a version when `keep`; how many went. */
async function removeFromSeq(
  connection: Connection,
  userId: string,
  sessionId: string,
  seq: number,
  keep: boolean,
): Promise<number> {
  if (keep) {
    const { rows: replaced } = await connection.query(
      `SELECT id, role, content, parts, metadata, run_id, created_at FROM messages
       WHERE user_id = $3 AND session_id = $1 AND seq >= $2 ORDER BY seq`,
      [sessionId, seq, userId],
    );
    const { rows: before } = await connection.query<{ id: string }>(
      'SELECT id FROM messages WHERE user_id = $3 AND session_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT 1',
      [sessionId, seq, userId],
    );
    await connection.query(
      `INSERT INTO message_versions (user_id, session_id, id, after_id, messages, replaced_at)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        userId,
        sessionId,
        `ver_${randomUUID()}`,
        before[0]?.id ?? null,
        JSON.stringify(replaced.map((message) => storedMessage(decoded(message, ['content'])))),
        Date.now(),
      ],
    );
  }
  const { rowCount } = await connection.query(
    'DELETE FROM messages WHERE user_id = $3 AND session_id = $1 AND seq >= $2',
    [sessionId, seq, userId],
  );
  return rowCount ?? 0;
}

/** The caller's session's row, locked; `unknown_session` when the caller has none by that id. */
async function owned(connection: Connection, userId: string, sessionId: string): Promise<{ title: string }> {
  const { rows } = await connection.query<{ title: string }>(
    'SELECT title FROM sessions WHERE user_id = $2 AND id = $1 FOR UPDATE',
    [sessionId, userId],
  );
  const owner = rows[0];
  if (!owner) throw new UserError('unknown_session', `There is no session "${sessionId}".`, { sessionId });
  return { title: fromPgText(owner.title) };
}

async function insert(
  connection: Connection,
  owner: { title: string },
  userId: string,
  sessionId: string,
  message: NewMessage,
): Promise<StoredMessage> {
  const now = Date.now();
  const id = message.id ?? `msg_${randomUUID()}`;
  await connection.query(
    `INSERT INTO messages (user_id, session_id, id, seq, role, content, parts, metadata, run_id, created_at)
     VALUES ($9, $2, $1, (SELECT COALESCE(MAX(seq), -1) + 1 FROM messages WHERE user_id = $9 AND session_id = $2),
       $3, $4, $5, $6, $7, $8)`,
    [
      id,
      sessionId,
      message.role,
      toPgText(message.content),
      message.parts === undefined ? null : JSON.stringify(message.parts),
      message.metadata === undefined ? null : JSON.stringify(message.metadata),
      message.runId ?? null,
      now,
      userId,
    ],
  );
  const title = owner.title || (message.role === 'user' ? sessionTitle(message.content) : '');
  await connection.query('UPDATE sessions SET updated_at = $1, title = $2 WHERE user_id = $4 AND id = $3', [
    now,
    toPgText(title),
    sessionId,
    userId,
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
