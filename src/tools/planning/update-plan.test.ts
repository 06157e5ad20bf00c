import { describe, expect, it } from 'vitest';
import type { EventBody } from '../../core/events.ts';
import { testToolContext } from '../../core/test-tool-context.ts';
import { updatePlanTool } from './update-plan.ts';

describe('update_plan', () => {
  it('publishes the whole checklist as a plan-update event', async () => {
    const emitted: EventBody[] = [];
    const context = testToolContext({
      runId: 'run_1',
      agent: 'planner',
      emit: (event) => emitted.push(event),
    });
    const input = updatePlanTool.input.parse({
      steps: [
        { title: 'Look up the price', status: 'done', result: '42 EUR' },
        { title: 'Convert', status: 'running' },
      ],
    });
    expect(await updatePlanTool.execute(input, context)).toEqual({
      recorded: 2,
      done: 1,
      pending: 1,
      failed: 0,
    });
    expect(emitted).toEqual([
      {
        type: 'plan-update',
        steps: [
          { title: 'Look up the price', status: 'done', result: '42 EUR' },
          { title: 'Convert', status: 'running' },
        ],
      },
    ]);
  });
});
