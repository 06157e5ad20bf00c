import { type ModelMessage, type Tool, tool } from 'ai';
import { z } from 'zod';
import type { AgentDefinition } from './agent-definition.ts';
import { delegationFailure, type StartChild } from './delegation.ts';
import { type ResultEnvelope, toModelView } from './envelope.ts';
import { ModelBehaviorError } from './errors.ts';
import { continuationOf } from './kept-conversations.ts';
import { childReturned, emitRefusedCall, type RunFrame } from './run-frame.ts';
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
 * the tree and whose result comes back as a delegation's does. It reaches the runs of the agents this run
 * may hand work to that finished in its conversation: its own children (held in memory while it runs),
 * and the runs whose conversations the tree's record kept (an earlier attempt's before a resume, another
 * worker's, an earlier turn's of the same session; see kept-conversations.ts for the rule). `mayContinue`
 * names the agents this run may hand work to. It is declared from a run's first step, beside its sub-agents, and
 * refuses until one has finished: a tool list that changed between steps would break the provider's
 * cache of the request's prefix.
 */
export function bindContinueTool(
  parent: RunFrame,
  mayContinue: (agent: string) => AgentDefinition | undefined,
  startChild: StartChild,
  maxResultChars: (definition: AgentDefinition) => number,
): Tool {
  let viewChars = 8_000;
  return tool({
    description:
      'Continue one of your finished sub-agent runs with a new message: it goes on from its own ' +
      'conversation (what it was asked, found and answered) rather than starting over. run_id is the ' +
      "run_id its result gave (in this conversation, also an earlier turn's). Only after a sub-agent has finished.",
    inputSchema: sdkSchema(continueInput),
    execute: async (input: z.infer<typeof continueInput>, options: { toolCallId: string }) => {
      const { toolCallId } = options;
      refuseBoundedCall(parent, toolCallId, CONTINUE_AGENT, input);
      const earlier = parent.finishedChildren.get(input.run_id) ?? (await keptRun(parent, input.run_id));
      const definition = 'agent' in earlier ? mayContinue(earlier.agent) : undefined;
      if (!('agent' in earlier) || !definition) {
        const reason =
          'refused' in earlier
            ? earlier.refused
            : `agent "${earlier.agent}" is not one you may hand work to (any more)`;
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

/** A run of the conversation the tree's record kept, or why it cannot be continued. */
async function keptRun(
  frame: RunFrame,
  runId: string,
): Promise<{ agent: string; conversation: ModelMessage[] } | { refused: string }> {
  const { tree } = frame;
  const keeper = tree.record.conversations;
  if (!keeper)
    return {
      refused: `there is no finished sub-agent run "${runId}" of yours to continue (without a store, a run's conversation is kept only in the run that started it, until that run ends)`,
    };
  const kept = await keeper.keptConversation(tree.userId, runId).catch(() => undefined);
  return continuationOf(kept, runId, {
    userId: tree.userId,
    rootRunId: tree.rootRunId,
    sessionId: tree.sessionId,
  });
}
