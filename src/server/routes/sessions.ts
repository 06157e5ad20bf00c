import { Hono } from 'hono';
import type { CadreUIMessage } from '../../app/answer/protocol.ts';
import type { StoredMessage } from '../../app/sessions.ts';
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
  routes.get('/', async (c) => c.json({ sessions: await c.var.cadre.sessions.list(c.var.userId) }));
  routes.get('/:id', async (c) => {
    const { cadre, userId } = c.var;
    const session = await cadre.sessions.get(userId, c.req.param('id'));
    const interrupted = await cadre.sessions.interrupted(userId, session.id);
    return c.json({ ...session, messages: session.messages.map(toUIMessage), interrupted });
  });
  routes.delete('/:id', async (c) => {
    await c.var.cadre.sessions.delete(c.var.userId, c.req.param('id'));
    return c.json({ deleted: true });
  });
  return routes;
}
