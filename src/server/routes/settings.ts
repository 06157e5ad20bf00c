import { Hono } from 'hono';
import { z } from 'zod';
import { modelStatus } from '../../app/agents.ts';
import type { DelegationSettings } from '../../app/settings.ts';
import { UserError } from '../../core/index.ts';
import type { ServerEnv } from '../server-env.ts';

const settingsPatch = z.strictObject({
  delegationMode: z.enum(['off', 'delegate', 'prefetch']).optional(),
  /** The agent and trigger prefetch mode needs (when the config files name none). */
  prefetch: z.strictObject({ agent: z.string().min(1), trigger: z.string().min(1) }).optional(),
});

function view(model: ReturnType<typeof modelStatus>, delegation: DelegationSettings) {
  return {
    ...model,
    // Seed 000's modes, named alike here and in config: answer alone, delegate when it decides, or prefetch.
    delegationMode: delegation.mode ?? 'delegate',
    ...(delegation.prefetch ? { prefetch: delegation.prefetch } : {}),
  };
}

/**
 * `GET /api/settings`: what the web app needs before the first message (whether a model is configured
 * and, when not, the CLI's own explanation) and the caller's delegation mode; `PATCH /api/settings
 * {delegationMode: "off" | "delegate" | "prefetch", prefetch?}` changes the mode for the caller from the next message on.
 */
export function settingsRoutes(): Hono<ServerEnv> {
  const routes = new Hono<ServerEnv>();
  routes.get('/', async (c) =>
    c.json(view(modelStatus(c.var.cadre), await c.var.cadre.settings.delegation(c.var.userId))),
  );
  routes.patch('/', async (c) => {
    const parsed = settingsPatch.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success)
      throw new UserError(
        'bad_request',
        `The body must be {delegationMode?: "off" | "delegate" | "prefetch", prefetch?: {agent, trigger}}: ${z.prettifyError(parsed.error)}`,
      );
    const { delegationMode, prefetch } = parsed.data;
    const delegation = await c.var.cadre.settings.updateDelegation(c.var.userId, {
      ...(delegationMode ? { mode: delegationMode } : {}),
      ...(prefetch ? { prefetch } : {}),
    });
    return c.json(view(modelStatus(c.var.cadre), delegation));
  });
  return routes;
}
