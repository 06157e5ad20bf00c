import { UserError } from '../core/errors.ts';
import type { Session, SessionSummary, StoredMessage } from '../store/session-store.ts';
import type { Cadre } from './create-cadre.ts';

export type { Session, SessionSummary, StoredMessage };

/** The user's sessions, most recently used first. */
export function listSessions(cadre: Cadre, userId: string, limit = 100): SessionSummary[] {
  return cadre.sessions.list(userId, limit);
}

/** One of the user's sessions with its messages; anyone else's is "not found". */
export function getSession(cadre: Cadre, userId: string, sessionId: string): Session {
  const session = cadre.sessions.get(userId, sessionId);
  if (!session) throw new UserError('not_found', `There is no session "${sessionId}".`, { sessionId });
  return session;
}

/** Deletes one of the user's sessions and its messages (the runs stay, as the record of what was done). */
export function deleteSession(cadre: Cadre, userId: string, sessionId: string): void {
  if (!cadre.sessions.delete(userId, sessionId))
    throw new UserError('not_found', `There is no session "${sessionId}".`, { sessionId });
}
