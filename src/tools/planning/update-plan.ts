import { z } from 'zod';
import type { PlanStep } from '../../core/events.ts';
import { defineTool } from '../../core/tool.ts';

const MAX_STEPS = 20;

const stepSchema = z.object({
  title: z.string().min(1).max(200).describe('What the step does, in a few words'),
  status: z.enum(['pending', 'running', 'done', 'failed', 'skipped']),
  result: z.string().max(1000).optional().describe("The step's outcome, once it has one"),
});

/**
 * `update_plan {steps}`: the planner states its plan, then ticks it off. Each call replaces the whole
 * checklist and is published as a `plan-update` event, so the CLI and the web UI can show it live.
 */
export const updatePlanTool = defineTool({
  name: 'update_plan',
  family: 'planning',
  description:
    'State or update your plan as a checklist. Call it first with every step "pending", then again whenever a ' +
    'step starts ("running") or ends ("done", "failed" or "skipped", with a one-line result). Always send the ' +
    'whole list.',
  input: z.object({ steps: z.array(stepSchema).min(1).max(MAX_STEPS) }),
  explicitOnly: true,
  async execute({ steps }, context) {
    const plan: PlanStep[] = steps.map((step) => ({
      title: step.title,
      status: step.status,
      ...(step.result !== undefined ? { result: step.result } : {}),
    }));
    context.emit({ type: 'plan-update', steps: plan });
    const count = (status: PlanStep['status']) => plan.filter((step) => step.status === status).length;
    return {
      recorded: plan.length,
      done: count('done'),
      pending: count('pending') + count('running'),
      failed: count('failed'),
    };
  },
});
