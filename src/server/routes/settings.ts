import { Hono } from 'hono';
import { modelStatus } from '../../app/agents.ts';
import type { ServerEnv } from '../server-env.ts';

/**
 * `GET /api/settings`: what the web app needs before the first message, chiefly whether a model is
 * configured and, when not, the same explanation the CLI prints.
 */
export function settingsRoutes(): Hono<ServerEnv> {
  const routes = new Hono<ServerEnv>();
  routes.get('/', (c) => c.json(modelStatus(c.var.cadre)));
  return routes;
}
