import { z } from 'zod';
import { agentToolInput } from '../core/delegation.ts';
import type { ResultEnvelope } from '../core/envelope.ts';
import { UserError } from '../core/errors.ts';
import type { EventListener } from '../core/events.ts';
import type { Cadre } from './create-cadre.ts';

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
export async function agentToolSpecs(cadre: Cadre, userId: string): Promise<AgentToolSpec[]> {
  const agents = (await cadre.runtime({ userId })).options.agents;
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
export async function callAgentTool(cadre: Cadre, call: AgentToolCall): Promise<ResultEnvelope> {
  const runtime = await cadre.runtime({ userId: call.userId });
  const definition = runtime.agent(call.agent);
  const parsed = agentToolInput(definition).safeParse(call.arguments ?? {});
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `${issue.path.join('.') || 'arguments'}: ${issue.message}`,
    );
    throw new UserError('bad_arguments', `${call.agent}: ${problems.join('; ')}`, { agent: call.agent });
  }
  const { task, ...inputs } = parsed.data as { task: string } & Record<string, unknown>;
  // A live tree like any other: its events can be followed and it can be stopped through the runs API,
  // and a server shutting down cancels it.
  const live = cadre.live.begin(call.userId);
  const signal = call.signal ? AbortSignal.any([call.signal, live.signal]) : live.signal;
  try {
    const outcome = await runtime.run({
      agent: call.agent,
      task,
      inputs,
      userId: call.userId,
      signal,
      onEvent: (event) => {
        live.observe(event);
        call.onEvent?.(event);
      },
    });
    return outcome.envelope;
  } finally {
    await cadre.store.runs.flush();
    live.end();
  }
}
