import { z } from 'zod';
import type { ResultEnvelope } from '../core/envelope.ts';
import { UserError } from '../core/errors.ts';
import type { EventListener } from '../core/events.ts';
import { agentToolInput } from '../core/index.ts';
import type { CompleteParts, CompleteRequest } from './complete.ts';
import type { TreeHandle } from './tree-handle.ts';

/** One agent offered as a tool to another program (MCP, OpenAI-style function calling). */
export interface AgentToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments: `task` plus the agent's declared inputs. */
  inputSchema: { type: 'object'; properties?: Record<string, object>; required?: string[] };
}

/**
 * Every enabled agent, as the tools a program may call on behalf of `userId`. The input schema is the one
 * a parent model sees for the same agent (`task` plus its declared inputs), so both doors check the same.
 */
export async function agentToolSpecs(
  parts: Pick<CompleteParts, 'runtime'>,
  userId: string,
): Promise<AgentToolSpec[]> {
  const agents = (await parts.runtime({ userId })).options.agents;
  return [...agents.values()]
    .filter((definition) => definition.enabled)
    .map((definition) => {
      const { $schema: _dialect, ...inputSchema } = z.toJSONSchema(agentToolInput(definition), {
        io: 'input',
      }) as AgentToolSpec['inputSchema'] & { $schema?: string };
      return { name: definition.name, description: definition.description, inputSchema };
    });
}

export interface AgentToolCall {
  userId: string;
  agent: string;
  /** The caller's arguments, checked here against the agent's declared inputs. */
  arguments: unknown;
  /** Cancels the whole tree; every run so ended is recorded `cancelled`. */
  signal?: AbortSignal;
  /** Every event of the tree, as it happens (progress for the caller). */
  onEvent?: EventListener;
}

/**
 * Runs one agent as a tool call, with all of Cadre's limits, and returns its result envelope. Bad
 * arguments and unknown or disabled agents are the caller's errors (`UserError`), raised before any run.
 */
export async function callAgentTool(
  parts: Pick<CompleteParts, 'runtime'> & { complete: (request: CompleteRequest) => Promise<TreeHandle> },
  call: AgentToolCall,
): Promise<ResultEnvelope> {
  const runtime = await parts.runtime({ userId: call.userId });
  const definition = runtime.agent(call.agent);
  const parsed = agentToolInput(definition).safeParse(call.arguments ?? {});
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `${issue.path.join('.') || 'arguments'}: ${issue.message}`,
    );
    throw new UserError('bad_arguments', `${call.agent}: ${problems.join('; ')}`, { agent: call.agent });
  }
  const { task, ...inputs } = parsed.data as { task: string } & Record<string, unknown>;
  // A tree like any other: journaled (resumable after a crash), followed and stopped through the runs
  // API, and cancelled by a server shutting down.
  const tree = await parts.complete({
    userId: call.userId,
    agent: call.agent,
    task,
    history: [],
    inputs,
    ...(call.signal ? { signal: call.signal } : {}),
    ...(call.onEvent ? { onEvent: call.onEvent } : {}),
  });
  return (await tree.result).envelope;
}
