import { Hono } from 'hono';
import { z } from 'zod';
import { UserError } from '../../core/index.ts';
import type { ServerEnv } from '../server-env.ts';

const decisionBody = z.strictObject({
  approved: z.boolean(),
  reason: z.string().max(2000).optional(),
});

/**
 * `GET /api/approvals` (the caller's pending approvals: id, run path, tool, input, expiry) and
 * `POST /api/approvals/:id {approved, reason?}`. A decision is signed with the install's secret before
 * the waiting run sees it; an id that is not pending for the caller is a 404.
 */
export function approvalRoutes(): Hono<ServerEnv> {
  const routes = new Hono<ServerEnv>();
  routes.get('/', async (c) => c.json({ approvals: await c.var.cadre.approvals.list(c.var.userId) }));
  routes.post('/:id', async (c) => {
    const parsed = decisionBody.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success) {
      throw new UserError(
        'bad_request',
        `The body must be {approved: boolean, reason?: string}: ${z.prettifyError(parsed.error)}`,
      );
    }
    const decision = await c.var.cadre.approvals.answer(c.var.userId, c.req.param('id'), {
      approved: parsed.data.approved,
      reason: parsed.data.reason,
      by: 'person',
    });
    return c.json({ approvalId: decision.approvalId, approved: decision.approved });
  });
  return routes;
}
