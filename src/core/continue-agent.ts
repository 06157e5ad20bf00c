import { type Tool, tool } from 'ai';
import { z } from 'zod';
import type { AgentDefinition } from './agent-definition.ts';
import { childReturned, delegationFailure, type StartChild } from './delegation.ts';
import { type ResultEnvelope, toModelView } from './envelope.ts';
import { ModelBehaviorError } from './errors.ts';
import { emitRefusedCall, type RunFrame } from './run-frame.ts';
import { sdkSchema } from './schema-cache.ts';
import { journaledCall, refuseBoundedCall, traceToolCall } from './tool-bindings.ts';

/** The tool a run calls to go on with one of its finished sub-agent runs. */
export const CONTINUE_AGENT = 'continue_agent';

const continueInput = z.strictObject({
  run_id: z
    .string()
    .trim()
    .min(1)
    .describe('The run_id a sub-agent result of yours gave, of a run that has finished.'),
  message: z
    .string()
    .trim()
    .min(1)
    .describe('What to ask it now: a follow-up, a correction, the next part of the work.'),
});

/**
 * `continue_agent {run_id, message}`: a finished sub-agent run of this run goes on from its own
 * conversation (its task, its tool calls and results, its answer), not from scratch, with `message` as
 * the next thing asked; as a new run (its run-start says which run it `continues`), whose usage counts in
 * the tree and whose result comes back as a delegation's does. Only runs this run started and that
 * finished here can be reached. It is declared from a run's first step, beside its sub-agents, and
 * refuses until one has finished: a tool list that changed between steps would break the provider's
 * cache of the request's prefix.
 */
export function bindContinueTool(
  parent: RunFrame,
  agentNamed: (name: string) => AgentDefinition | undefined,
  startChild: StartChild,
  maxResultChars: (definition: AgentDefinition) => number,
): Tool {
  let viewChars = 8_000;
  return tool({
    description:
      'Continue one of your finished sub-agent runs with a new message: it goes on from its own ' +
      'conversation (what it was asked, found and answered) rather than starting over. run_id is the ' +
      'run_id its result gave. Only after a sub-agent has finished.',
    inputSchema: sdkSchema(continueInput),
    execute: async (input: z.infer<typeof continueInput>, options: { toolCallId: string }) => {
      const { toolCallId } = options;
      refuseBoundedCall(parent, toolCallId, CONTINUE_AGENT, input);
      const earlier = parent.finishedChildren.get(input.run_id);
      const definition = earlier ? agentNamed(earlier.agent) : undefined;
      if (!earlier || !definition?.enabled) {
        const reason = earlier
          ? `agent "${earlier.agent}" is not available any more`
          : `there is no finished sub-agent run "${input.run_id}" of yours to continue (its conversation is kept only in the run that started it, until that run ends)`;
        emitRefusedCall(parent, { toolCallId, name: CONTINUE_AGENT, input }, reason);
        throw new ModelBehaviorError('unknown_run', reason, { runId: input.run_id });
      }
      viewChars = maxResultChars(definition);
      parent.stepDelegations++;
      if (parent.stepDelegations > parent.limits.maxFanOut) {
        const message = `refused: at most ${parent.limits.maxFanOut} delegations per step; ask for the rest in a later step`;
        emitRefusedCall(parent, { toolCallId, name: CONTINUE_AGENT, input }, message);
        throw new ModelBehaviorError('fan_out', message, { limit: parent.limits.maxFanOut });
      }
      const run = traceToolCall(
        parent,
        { toolCallId, name: CONTINUE_AGENT, input },
        () =>
          journaledCall(parent, toolCallId, async () => {
            await parent.stepUsageKnown;
            const release = await parent.siblings.acquire(parent.signal);
            try {
              const envelope = await startChild({
                definition,
                task: input.message,
                inputs: {},
                parent,
                toolCallId,
                continues: { runId: input.run_id, conversation: earlier.conversation },
              });
              return childReturned(parent, envelope);
            } finally {
              release();
            }
          }),
        delegationFailure,
      );
      parent.children.add(run);
      return run;
    },
    toModelOutput: ({ output }: { output: ResultEnvelope }) => ({
      type: 'json' as const,
      value: toModelView(output, viewChars) as any,
    }),
  } as any) as Tool;
}
