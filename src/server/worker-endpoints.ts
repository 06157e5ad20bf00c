import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { Cadre } from '../app/create-cadre.ts';
import { METRICS_CONTENT_TYPE } from '../app/metrics.ts';
import { VERSION } from '../app/version.ts';

/** What a `cadre worker` started with `--port` answers: its health, readiness and metrics, nothing else. */
export interface WorkerEndpoints {
  url: string;
  close(): Promise<void>;
}

/**
 * The HTTP side of a worker, for a process manager or a load balancer's probe: `GET /health` (the process
 * is up), `GET /ready` (its database answers, migrated as this code expects: 200, else 503 with why) and,
 * when the config turns them on, `GET /metrics`.
 * It serves no question and reads no body; everything else is a 404.
 */
export async function startWorkerEndpoints(options: {
  cadre: Cadre;
  host: string;
  port: number;
}): Promise<WorkerEndpoints> {
  const app = new Hono();
  app.get('/health', (c) => c.json({ ok: true, version: VERSION }));
  app.get('/ready', async (c) => {
    const ready = await options.cadre.readiness();
    return c.json({ ...ready, version: VERSION }, ready.ready ? 200 : 503);
  });
  app.get('/metrics', async (c) => {
    const text = await options.cadre.metricsText();
    if (text === undefined)
      return c.json(
        { error: { code: 'not_found', message: 'Metrics are off: set "metrics": true in the config.' } },
        404,
      );
    return new Response(text, { status: 200, headers: { 'content-type': METRICS_CONTENT_TYPE } });
  });
  app.onError((error, c) => {
    process.stderr.write(`cadre worker: ${c.req.path}: ${(error as Error).stack ?? error}\n`);
    return c.json({ error: { code: 'internal', message: (error as Error).message } }, 500);
  });
  app.notFound((c) =>
    c.json({ error: { code: 'not_found', message: `No route for ${c.req.method} ${c.req.path}.` } }, 404),
  );
  const server = await new Promise<ServerType>((resolve, reject) => {
    const started = serve({ fetch: app.fetch, hostname: options.host, port: options.port }, () =>
      resolve(started),
    );
    started.once('error', reject);
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
