import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { ServerEnv } from '../server-env.ts';

/**
 * `GET /api/runs/:id`, `GET /api/runs/:id/events` (SSE, resumable), `POST /api/runs/:id/cancel`,
 * `POST /api/runs/:id/resume`.
 */
export function runRoutes(options: { maxConcurrentChats?: number } = {}): Hono<ServerEnv> {
  const routes = new Hono<ServerEnv>();
  routes.get('/:id', async (c) => c.json(await c.var.cadre.runs.get(c.var.userId, c.req.param('id'))));
  routes.post('/:id/cancel', async (c) =>
    c.json(await c.var.cadre.runs.cancel(c.var.userId, c.req.param('id'))),
  );
  // Continues an interrupted tree in the background; answers with the new attempt's root id at once.
  routes.post('/:id/resume', async (c) => {
    const resumed = await c.var.cadre.resume({
      userId: c.var.userId,
      runId: c.req.param('id'),
      ...(options.maxConcurrentChats !== undefined ? { maxConcurrent: options.maxConcurrentChats } : {}),
    });
    return c.json({ runId: resumed.rootRunId, resumedFrom: c.req.param('id') }, 202);
  });
  routes.get('/:id/events', async (c) => {
    const { cadre, userId } = c.var;
    const runId = c.req.param('id');
    // SSE ids are positions in the tree from 0; the store's cursors count from 1.
    const after = parseCursor(c.req.header('last-event-id') ?? c.req.query('after'));
    const stopped = new AbortController();
    // An unknown run is a 404 here; a live one's stream opens at once, before its next event.
    const events = await cadre.runs.follow(userId, runId, { after: after + 1, signal: stopped.signal });
    return streamSSE(c, async (stream) => {
      stream.onAbort(() => stopped.abort());
      for await (const { cursor, event } of events) {
        if (stream.aborted) break;
        await stream.writeSSE({ id: String(cursor - 1), event: event.type, data: JSON.stringify(event) });
      }
    });
  });
  return routes;
}

function parseCursor(value: string | undefined): number {
  const parsed = Number(value);
  return value !== undefined && Number.isInteger(parsed) && parsed >= 0 ? parsed : -1;
}
