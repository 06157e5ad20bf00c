import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import { UserError } from '../../core/index.ts';
import type { ServerEnv } from '../server-env.ts';

const messageBody = z.strictObject({ text: z.string() });

/**
 * `GET /api/runs?running=true` (every running run, background ones marked), `GET /api/runs/:id`, `GET /api/runs/:id/events` (SSE, resumable), `POST /api/runs/:id/cancel` (a
 * root stops its tree, any other run stops alone), `POST /api/runs/:id/messages {text}` (a person's
 * message to a running run), `POST /api/runs/:id/resume`.
 */
export function runRoutes(options: { maxConcurrentChats?: number } = {}): Hono<ServerEnv> {
  const routes = new Hono<ServerEnv>();
  // Every run that is running now, at any depth, background ones marked (`cadre runs list --running`).
  routes.get('/', async (c) => {
    if (c.req.query('running') !== 'true')
      throw new UserError('bad_request', 'GET /api/runs lists running runs: ask for /api/runs?running=true');
    return c.json({ runs: await c.var.cadre.runs.running(c.var.userId) });
  });
  routes.get('/:id', async (c) => c.json(await c.var.cadre.runs.get(c.var.userId, c.req.param('id'))));
  routes.post('/:id/cancel', async (c) =>
    c.json(await c.var.cadre.runs.cancel(c.var.userId, c.req.param('id'))),
  );
  // A person's message to a running run: it joins the run's next model step (202 {messageId}: it is on
  // its way). To a finished sub-agent run: a follow-up, a new turn of its session that its agent answers
  // from the run's conversation (202 {runId, continues, sessionId, answerId}: the new tree has started,
  // and goes on whether or not anyone follows it: GET /api/chat/:session/stream or /api/runs/:id/events).
  routes.post('/:id/messages', async (c) => {
    const parsed = messageBody.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success)
      throw new UserError('bad_request', `The body must be {text: string}: ${z.prettifyError(parsed.error)}`);
    const runId = c.req.param('id');
    const said = await c.var.cadre.say({
      userId: c.var.userId,
      runId,
      text: parsed.data.text,
      ...(options.maxConcurrentChats !== undefined ? { maxConcurrent: options.maxConcurrentChats } : {}),
    });
    if ('messageId' in said) return c.json(said, 202);
    const { followUp } = said;
    // Nobody waits on its result here: its answer is stored in the session where it runs.
    followUp.result.catch(() => {});
    return c.json(
      {
        runId: followUp.rootRunId,
        continues: runId,
        sessionId: followUp.sessionId,
        answerId: followUp.answerId,
      },
      202,
    );
  });
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
