import { randomUUID } from 'node:crypto';
import { UserError } from '../core/errors.ts';
import type { Database } from './database.ts';

export interface StoredMessage {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  /** UI parts (sub-agent runs, tool calls) as the web app shows them; optional. */
  parts?: unknown;
  /** Front-door metadata of the message (e.g. the UI message's metadata); optional. */
  metadata?: unknown;
  runId?: string;
  createdAt: string;
}

export interface SessionSummary {
  id: string;
  title: string;
  createdAt: string;
  updatedAt: string;
}

export interface Session extends SessionSummary {
  messages: StoredMessage[];
}

/**
 * Sessions and their messages. Every message is committed when it is appended, never batched: an
 * accepted message survives a crash.
 */
export class SessionStore {
  #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  /** A new session; an `id` already taken (by anyone) is a `session_exists` error. */
  create(userId: string, options: { id?: string; title?: string } = {}): SessionSummary {
    const now = Date.now();
    const id = options.id ?? `ses_${randomUUID()}`;
    const inserted = this.#db
      .prepare(
        'INSERT INTO sessions (id, user_id, title, created_at, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING',
      )
      .run(id, userId, options.title ?? '', now, now);
    if (inserted.changes === 0)
      throw new UserError('session_exists', `The session id "${id}" is taken.`, { sessionId: id });
    return { id, title: options.title ?? '', createdAt: iso(now), updatedAt: iso(now) };
  }

  /** The session if it exists and belongs to `userId`. */
  get(userId: string, id: string): Session | undefined {
    const row = this.#db
      .prepare('SELECT id, title, created_at, updated_at FROM sessions WHERE id = ? AND user_id = ?')
      .get(id, userId) as Record<string, any> | undefined;
    if (!row) return undefined;
    const messages = (
      this.#db
        .prepare(
          'SELECT id, role, content, parts, metadata, run_id, created_at FROM messages WHERE session_id = ? ORDER BY seq',
        )
        .all(id) as Array<Record<string, any>>
    ).map((message) => ({
      id: message.id,
      role: message.role,
      content: message.content,
      ...(message.parts ? { parts: JSON.parse(message.parts) } : {}),
      ...(message.metadata ? { metadata: JSON.parse(message.metadata) } : {}),
      ...(message.run_id ? { runId: message.run_id } : {}),
      createdAt: iso(message.created_at),
    }));
    return { ...summary(row), messages };
  }

  list(userId: string, limit = 100): SessionSummary[] {
    return (
      this.#db
        .prepare(
          'SELECT id, title, created_at, updated_at FROM sessions WHERE user_id = ? ORDER BY updated_at DESC LIMIT ?',
        )
        .all(userId, limit) as Array<Record<string, any>>
    ).map(summary);
  }

  append(
    userId: string,
    sessionId: string,
    message: {
      role: 'user' | 'assistant';
      content: string;
      parts?: unknown;
      metadata?: unknown;
      runId?: string;
      id?: string;
    },
  ): StoredMessage {
    const owner = this.#db.prepare('SELECT user_id, title FROM sessions WHERE id = ?').get(sessionId) as
      | { user_id: string; title: string }
      | undefined;
    if (!owner || owner.user_id !== userId)
      throw new UserError('not_found', `There is no session "${sessionId}".`, { sessionId });
    const now = Date.now();
    const id = message.id ?? `msg_${randomUUID()}`;
    const next = this.#db
      .prepare('SELECT COALESCE(MAX(seq), -1) + 1 AS seq FROM messages WHERE session_id = ?')
      .get(sessionId) as { seq: number };
    this.#db
      .prepare(
        'INSERT INTO messages (id, session_id, seq, role, content, parts, metadata, run_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        id,
        sessionId,
        next.seq,
        message.role,
        message.content,
        message.parts === undefined ? null : JSON.stringify(message.parts),
        message.metadata === undefined ? null : JSON.stringify(message.metadata),
        message.runId ?? null,
        now,
      );
    const title = owner.title || (message.role === 'user' ? message.content.slice(0, 80) : '');
    this.#db.prepare('UPDATE sessions SET updated_at = ?, title = ? WHERE id = ?').run(now, title, sessionId);
    return { id, role: message.role, content: message.content, createdAt: iso(now) };
  }

  delete(userId: string, id: string): boolean {
    return this.#db.prepare('DELETE FROM sessions WHERE id = ? AND user_id = ?').run(id, userId).changes > 0;
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function summary(row: Record<string, any>): SessionSummary {
  return { id: row.id, title: row.title, createdAt: iso(row.created_at), updatedAt: iso(row.updated_at) };
}
