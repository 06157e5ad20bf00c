import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import type { CadreUIMessage } from '../../app/answer/protocol.ts';
import { EXPORT_FORMATS, exportFileName, sessionMarkdown } from '../../app/session-export.ts';
import type { MessageVersion, StoredMessage } from '../../app/sessions.ts';
import { UserError } from '../../core/index.ts';
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

const sessionPatch = z.strictObject({ title: z.string() });
const searchQuery = z.object({ q: z.string().trim().min(1).max(500) });

/**
 * `GET /api/sessions`, `GET /api/sessions/search?q=` (the caller's messages that match, with the matching
 * line), `GET /api/sessions/events` (SSE: `sessions` events, the list with `answering` marks,
 * again at each change), `GET /api/sessions/:id` (with UI messages), `PATCH /api/sessions/:id {title}`
 * (rename), `POST /api/sessions/:id/versions/:versionId/restore` (an earlier version made current
 * again), `GET /api/sessions/:id/export?format=md|json` (a download: Markdown, or the session with
 * its run trees as JSON), `DELETE /api/sessions/:id`. Each acts on the caller's own sessions only.
 */
export function sessionRoutes(): Hono<ServerEnv> {
  const routes = new Hono<ServerEnv>();
  routes.get('/', async (c) => c.json({ sessions: await c.var.cadre.sessions.list(c.var.userId) }));
  routes.get('/search', async (c) => {
    const parsed = searchQuery.safeParse({ q: c.req.query('q') ?? '' });
    if (!parsed.success)
      throw new UserError('bad_request', `q is the text to find: ${z.prettifyError(parsed.error)}`);
    return c.json({ matches: await c.var.cadre.sessions.searchMessages(c.var.userId, parsed.data.q) });
  });
  // One stream per page: the chat list again, each time it changes (answering marks included).
  routes.get('/events', (c) =>
    streamSSE(c, async (stream) => {
      const stop = new AbortController();
      stream.onAbort(() => stop.abort());
      for await (const sessions of c.var.cadre.sessions.changes(c.var.userId, { signal: stop.signal }))
        await stream.writeSSE({ event: 'sessions', data: JSON.stringify({ sessions }) });
    }),
  );
  routes.get('/:id', async (c) => {
    const { cadre, userId } = c.var;
    const session = await cadre.sessions.get(userId, c.req.param('id'));
    const interrupted = await cadre.sessions.interrupted(userId, session.id);
    return c.json({
      ...session,
      messages: session.messages.map(toUIMessage),
      versions: session.versions.map(toUIVersion),
      interrupted,
    });
  });
  routes.post('/:id/versions/:versionId/restore', async (c) => {
    const { cadre, userId } = c.var;
    const session = await cadre.sessions.restoreVersion(userId, c.req.param('id'), c.req.param('versionId'));
    return c.json({
      ...session,
      messages: session.messages.map(toUIMessage),
      versions: session.versions.map(toUIVersion),
    });
  });
  routes.patch('/:id', async (c) => {
    const parsed = sessionPatch.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success)
      throw new UserError('bad_request', `The body must be {title}: ${z.prettifyError(parsed.error)}`);
    const session = await c.var.cadre.sessions.rename(c.var.userId, c.req.param('id'), parsed.data.title);
    return c.json({ session });
  });
  routes.get('/:id/export', async (c) => {
    const format = c.req.query('format') ?? 'md';
    if (!(EXPORT_FORMATS as readonly string[]).includes(format))
      throw new UserError('bad_request', `format is one of ${EXPORT_FORMATS.join(', ')}, not "${format}".`);
    const exported = await c.var.cadre.sessions.withRuns(c.var.userId, c.req.param('id'));
    const name = exportFileName(exported.session.title, format as 'md' | 'json');
    c.header('content-disposition', `attachment; filename="${name}"`);
    c.header('cache-control', 'no-store');
    if (format === 'json') {
      const { session, runs } = exported;
      return c.json({
        exportedAt: new Date().toISOString(),
        ...session,
        messages: session.messages.map(toUIMessage),
        versions: session.versions.map(toUIVersion),
        runs,
      });
    }
    c.header('content-type', 'text/markdown; charset=utf-8');
    return c.body(sessionMarkdown(exported));
  });
  routes.delete('/:id', async (c) => {
    await c.var.cadre.sessions.delete(c.var.userId, c.req.param('id'));
    return c.json({ deleted: true });
  });
  return routes;
}

/** An earlier version of what followed `afterId`, its messages as the page shows them. */
function toUIVersion(version: MessageVersion) {
  return { ...version, messages: version.messages.map(toUIMessage) };
}
