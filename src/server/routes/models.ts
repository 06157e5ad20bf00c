import { Hono } from 'hono';
import type { ServerEnv } from '../server-env.ts';

/**
 * `GET /api/models`: the models the server's set-up providers offer (each provider's own list, else the
 * models the config and the caller's settings name), and the providers not set up with the variable each needs.
 */
export function modelRoutes(): Hono<ServerEnv> {
  const routes = new Hono<ServerEnv>();
  routes.get('/', async (c) => c.json(await c.var.cadre.models.list(c.var.userId)));
  return routes;
}
