import { Hono } from 'hono';
import { deleteSession, getSession, listSessions, type StoredMessage } from '../../app/sessions.ts';
import type { CadreUIMessage } from '../chat-protocol.ts';
import type { ServerEnv } from '../server-env.ts';

/** A stored message as `useChat` holds it: its parts (text only for messages stored without parts). */
export function toUIMessage(message: StoredMessage): CadreUIMessage & { createdAt: string } {
  const parts = Array.isArray(message.parts)
    ? (message.parts as CadreUIMessage['parts'])
    : [{ type: 'text' as const, text: message.content }];
  return {
    id: message.id,
    role: message.role,
    parts,
    ...(message.metadata ? { metadata: message.metadata as CadreUIMessage['metadata'] } : {}),
    createdAt: message.createdAt,
  };
}

/** `GET /api/sessions`, `GET /api/sessions/:id` (with UI messages), `DELETE /api/sessions/:id`. */
export function sessionRoutes(): Hono<ServerEnv> {
  const routes = new Hono<ServerEnv>();
  routes.get('/', (c) => c.json({ sessions: listSessions(c.var.cadre, c.var.userId) }));
  routes.get('/:id', (c) => {
    const session = getSession(c.var.cadre, c.var.userId, c.req.param('id'));
    return c.json({ ...session, messages: session.messages.map(toUIMessage) });
  });
  routes.delete('/:id', (c) => {
    deleteSession(c.var.cadre, c.var.userId, c.req.param('id'));
    return c.json({ deleted: true });
  });
  return routes;
}
