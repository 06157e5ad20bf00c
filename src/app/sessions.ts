import { UserError } from '../core/errors.ts';
import type { Session, SessionSummary, StoredMessage } from '../store/store.ts';
import type { CadreParts } from './create-cadre.ts';

export type { Session, SessionSummary, StoredMessage };

/** A user's sessions: list, read, start, delete. Someone else's session is "no such session". */
export class SessionsUseCases {
  #parts: CadreParts;

  constructor(parts: CadreParts) {
    this.#parts = parts;
  }

  list(userId: string, options: { limit?: number } = {}): Promise<SessionSummary[]> {
    return this.#parts.store.sessions.list(userId, options);
  }

  /** The session with its messages; `UserError('unknown_session')` when the caller has none by that id. */
  async get(userId: string, sessionId: string): Promise<Session> {
    const session = await this.#parts.store.sessions.get(userId, sessionId);
    if (!session) throw unknownSession(sessionId);
    return session;
  }

  create(userId: string, options: { id?: string; title?: string } = {}): Promise<SessionSummary> {
    return this.#parts.store.sessions.create(userId, options);
  }

  /** Deletes the session and its messages (its runs stay, listed under `runs`). */
  async delete(userId: string, sessionId: string): Promise<void> {
    if (!(await this.#parts.store.sessions.delete(userId, sessionId))) throw unknownSession(sessionId);
  }
}

function unknownSession(sessionId: string): UserError {
  return new UserError('unknown_session', `There is no session "${sessionId}". See: cadre sessions list`, {
    sessionId,
  });
}
