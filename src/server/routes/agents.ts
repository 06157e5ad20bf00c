import { Hono } from 'hono';
import { z } from 'zod';
import { listAgents, updateAgent } from '../../app/agents.ts';
import { agentSettingsPatch } from '../../app/settings.ts';
import { UserError } from '../../core/index.ts';
import type { ServerEnv } from '../server-env.ts';

const agentPatch = z.strictObject({
  enabled: z.boolean().optional(),
  model: z.string().trim().min(1).max(200).nullable().optional(),
  timeoutSeconds: z.number().positive().nullable().optional(),
  reasoning: agentSettingsPatch.shape.reasoning,
});

/** `GET /api/agents` (definitions with this user's settings), `PATCH /api/agents/:name {enabled?, model?, timeoutSeconds?, reasoning?}`. */
export function agentRoutes(): Hono<ServerEnv> {
  const routes = new Hono<ServerEnv>();
  routes.get('/', async (c) => c.json({ agents: await listAgents(c.var.cadre, c.var.userId) }));
  routes.patch('/:name', async (c) => {
    const parsed = agentPatch.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success)
      throw new UserError(
        'bad_request',
        `The body must be {enabled?, model?, timeoutSeconds?, reasoning?}: ${z.prettifyError(parsed.error)}`,
      );
    const name = c.req.param('name');
    await updateAgent(c.var.cadre, c.var.userId, name, parsed.data);
    const agent = (await listAgents(c.var.cadre, c.var.userId)).find((each) => each.name === name);
    return c.json({ agent });
  });
  return routes;
}
