import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { ServerEnv } from '../server-env.ts';

/** `GET /api/runs/:id`, `GET /api/runs/:id/events` (SSE, resumable), `POST /api/runs/:id/cancel`. */
export function runRoutes(): Hono<ServerEnv> {
  const routes = new Hono<ServerEnv>();
  routes.get('/:id', async (c) => c.json(await c.var.cadre.runs.get(c.var.userId, c.req.param('id'))));
  routes.post('/:id/cancel', async (c) =>
    c.json(await c.var.cadre.runs.cancel(c.var.userId, c.req.param('id'))),
  );
  routes.get('/:id/events', async (c) => {
    const { cadre, userId } = c.var;
    const runId = c.req.param('id');
    // SSE ids are positions in the tree from 0; the store's cursors count from 1.
    const after = parseCursor(c.req.header('last-event-id') ?? c.req.query('after'));
    const stopped = new AbortController();
    const events = cadre.runs.events(userId, runId, { after: after + 1, signal: stopped.signal });
    // The first read settles whether the run exists (a 404 before the stream starts).
    const first = await events.next();
    return streamSSE(c, async (stream) => {
      stream.onAbort(() => stopped.abort());
      for (let next = first; !next.done && !stream.aborted; next = await events.next()) {
        const { cursor, event } = next.value;
        await stream.writeSSE({ id: String(cursor - 1), event: event.type, data: JSON.stringify(event) });
      }
      await events.return(undefined);
    });
  });
  return routes;
}

function parseCursor(value: string | undefined): number {
  const parsed = Number(value);
  return value !== undefined && Number.isInteger(parsed) && parsed >= 0 ? parsed : -1;
}
