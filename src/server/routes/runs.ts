import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { cancelRun, followRunEvents, getRun } from '../../app/runs.ts';
import type { CadreEvent } from '../../core/events.ts';
import type { ServerEnv } from '../server-env.ts';

/** `GET /api/runs/:id`, `GET /api/runs/:id/events` (SSE, resumable), `POST /api/runs/:id/cancel`. */
export function runRoutes(): Hono<ServerEnv> {
  const routes = new Hono<ServerEnv>();
  routes.get('/:id', (c) => c.json(getRun(c.var.cadre, c.var.userId, c.req.param('id'))));
  routes.post('/:id/cancel', (c) => c.json(cancelRun(c.var.cadre, c.var.userId, c.req.param('id'))));
  routes.get('/:id/events', (c) => {
    const { cadre, userId } = c.var;
    const runId = c.req.param('id');
    const after = parseCursor(c.req.header('last-event-id') ?? c.req.query('after'));
    // Queue what arrives while the socket is busy; the writer below drains it in order.
    const queue: Array<{ event: CadreEvent; index: number }> = [];
    let ended = false;
    let wake: (() => void) | undefined;
    const stop = followRunEvents(cadre, userId, runId, after, {
      event: (event, index) => {
        queue.push({ event, index });
        wake?.();
      },
      end: () => {
        ended = true;
        wake?.();
      },
    });
    return streamSSE(c, async (stream) => {
      stream.onAbort(() => {
        ended = true;
        stop();
        wake?.();
      });
      while (!stream.aborted) {
        const next = queue.shift();
        if (next) {
          await stream.writeSSE({
            id: String(next.index),
            event: next.event.type,
            data: JSON.stringify(next.event),
          });
          continue;
        }
        if (ended) break;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
      stop();
    });
  });
  return routes;
}

function parseCursor(value: string | undefined): number {
  const parsed = Number(value);
  return value !== undefined && Number.isInteger(parsed) && parsed >= 0 ? parsed : -1;
}
