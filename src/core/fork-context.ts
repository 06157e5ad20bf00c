import type { JSONSchema7 } from '@ai-sdk/provider';
import { asSchema, jsonSchema, type ModelMessage, type ToolSet, tool } from 'ai';
import { ModelBehaviorError } from './errors.ts';
import { estimateTokens } from './usage.ts';

/**
 * `context: fork`: a child starts from its parent's whole conversation, and its first model request begins
 * exactly as its parent's last one did, so a provider that caches prompt prefixes (OpenAI by prefix under a
 * cache key, Anthropic up to a cache breakpoint over tools, system and messages) reads that prefix from its
 * cache. The prefix is the parent's instructions as it sent them (prepared and prefetched sections
 * included), its tool declarations in their order, and its messages verbatim (tool calls and results too) up
 * to the step that delegates; then one user message carries the child's own instructions and its task.
 * All of it is plain data (see ChildRunRequest), so a child run by another worker starts the same way.
 */

/** One tool as the model was offered it: what makes the request's `tools` part. */
export interface DeclaredTool {
  name: string;
  description?: string;
  inputSchema: JSONSchema7;
}

/** What a forked child's requests begin with besides the parent's messages. */
export interface ForkedPrefix {
  /** The parent agent's name: OpenAI's prompt cache key is per agent, so the child uses the parent's. */
  agent: string;
  /** The parent's model: a child on another model shares no cache, but still gets the conversation. */
  modelRef: string;
  instructions: string;
  tools: DeclaredTool[];
}

/** What a run sent with its messages, kept for forked children (set once its tools are bound). */
export interface SentPrefix {
  instructions: string;
  tools: ToolSet;
}

/** The parent's prefix as plain data: its tools' input schemas as the JSON Schema providers receive. */
export async function forkedPrefix(
  parent: { definition: { name: string }; modelRef: string },
  sent: SentPrefix,
): Promise<ForkedPrefix> {
  const tools: DeclaredTool[] = [];
  for (const [name, bound] of Object.entries(sent.tools)) {
    const inputSchema = await asSchema(bound.inputSchema).jsonSchema;
    tools.push({
      name,
      ...(typeof bound.description === 'string' ? { description: bound.description } : {}),
      inputSchema: structuredClone(inputSchema),
    });
  }
  return { agent: parent.definition.name, modelRef: parent.modelRef, instructions: sent.instructions, tools };
}

/**
 * The forked child's tools: the parent's declarations in the parent's order (the child's own binding where
 * it may run that tool), then the child's tools the parent did not have. A call to a parent tool the child
 * may not run is refused (its result says so), never run.
 */
export function forkTools(prefix: ForkedPrefix, own: ToolSet, agent: string): ToolSet {
  const tools: ToolSet = {};
  for (const declared of prefix.tools) {
    const mine = own[declared.name];
    tools[declared.name] =
      mine ??
      tool({
        ...(declared.description !== undefined ? { description: declared.description } : {}),
        inputSchema: jsonSchema(declared.inputSchema),
        execute: async () => {
          throw new ModelBehaviorError(
            'tool_not_allowed',
            `"${declared.name}" is not one of ${agent}'s tools: it is declared only because this run was forked from its parent's conversation. Use your own tools.`,
          );
        },
      } as never);
  }
  for (const [name, bound] of Object.entries(own)) if (!(name in tools)) tools[name] = bound;
  return tools;
}

/** The forked child's first message after the parent's conversation: its own instructions, then its task. */
export function forkBrief(agent: string, instructions: string, task: string): ModelMessage {
  const own = instructions.trim();
  const lines = [
    `You are now the sub-agent "${agent}", started with the conversation above. Work only on the task below and answer it; the agent that started you gets your answer.`,
    ...(own ? ['', `Your instructions:\n${own}`] : []),
    '',
    `Your task:\n${task}`,
  ];
  return { role: 'user', content: lines.join('\n') };
}

/**
 * The agent whose prompt cache a run's calls use: a forked child on its parent's model uses its parent's
 * (OpenAI's `promptCacheKey` is per agent name), so its first request finds the parent's prefix.
 */
export function cacheIdentity<T extends { name: string }>(
  definition: T,
  modelRef: string,
  fork: ForkedPrefix | undefined,
): T {
  return fork && fork.modelRef === modelRef ? { ...definition, name: fork.agent } : definition;
}

/**
 * Why a forked child cannot start, or undefined: the whole conversation it carries, estimated in tokens
 * (characters / 4, as usage is estimated where a provider reports none), must fit in what is left of its
 * run's and its tree's token budgets, since its first request alone would read that much.
 */
export function forkTooLarge(
  frame: {
    limits: { runBudget?: number | undefined; treeBudget?: number | undefined };
    tree: { ledger: { spent(): number } };
  },
  messages: ModelMessage[],
  prefix: ForkedPrefix,
): string | undefined {
  const tokens = estimateTokens(JSON.stringify([prefix.instructions, prefix.tools, messages]).length);
  const { runBudget, treeBudget } = frame.limits;
  const left = Math.min(
    runBudget ?? Number.POSITIVE_INFINITY,
    treeBudget === undefined ? Number.POSITIVE_INFINITY : treeBudget - frame.tree.ledger.spent(),
  );
  if (tokens <= left) return undefined;
  return `Not started: the forked conversation (about ${tokens.toLocaleString('en')} tokens) is larger than the ${left.toLocaleString('en')} tokens left of the token budget. Give this agent "context: last-N" or a larger budget.`;
}
