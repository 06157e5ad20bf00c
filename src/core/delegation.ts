import { type ModelMessage, type Tool, tool } from 'ai';
import { z } from 'zod';
import type { AgentDefinition, DeclaredInput } from './agent-definition.ts';
import {
  type BackgroundStart,
  backgroundRoom,
  delegateInBackground,
  isBackgroundStart,
  wantsBackground,
} from './background.ts';
import { type ResultEnvelope, toModelView } from './envelope.ts';
import { ModelBehaviorError } from './errors.ts';
import type { ResultKey, ResultMemory } from './result-memory.ts';
import { childReturned, emit, emitRefusedCall, type RunFrame } from './run-frame.ts';
import { sdkSchema } from './schema-cache.ts';
import { journaledCall, refuseBoundedCall, traceToolCall } from './tool-bindings.ts';

export interface ChildRequest {
  definition: AgentDefinition;
  task: string;
  inputs: Record<string, unknown>;
  parent: RunFrame;
  /** The parent's tool call this run answers. */
  toolCallId?: string;
  /** Continuing a finished run (`continue_agent`): its id, and its conversation as the new run's history. */
  continues?: { runId: string; conversation: ModelMessage[] };
  /** The run's id, decided before it starts (a background run's, which its parent is told at once). */
  runId?: string;
  /** Runs in the background (see background.ts). */
  background?: true;
}

export type StartChild = (request: ChildRequest) => Promise<ResultEnvelope>;

const inputSchemas = new WeakMap<AgentDefinition, z.ZodType>();

/** The input schema of an agent tool: `task` plus the agent's declared inputs (built once per definition). */
export function agentToolInput(definition: AgentDefinition): z.ZodType {
  const known = inputSchemas.get(definition);
  if (known) return known;
  const schema = buildAgentToolInput(definition);
  inputSchemas.set(definition, schema);
  return schema;
}

function buildAgentToolInput(definition: AgentDefinition) {
  const shape: Record<string, z.ZodType> = {
    task: z
      .string()
      .trim()
      .min(1)
      .describe('The focused task for this agent, with everything it needs to know.'),
  };
  for (const [name, declared] of Object.entries(definition.inputs)) shape[name] = declaredInputType(declared);
  // Declared whenever the definition allows it (not only while there is room): the tool list stays the same.
  if (definition.background === 'allowed')
    shape.background ??= z
      .boolean()
      .optional()
      .describe(
        'true: run in the background. You get a run_id at once and go on (or answer); its result comes to you later as a message.',
      );
  return z.strictObject(shape);
}

function declaredInputType(declared: DeclaredInput): z.ZodType {
  const base =
    declared.type === 'number'
      ? z.number()
      : declared.type === 'integer'
        ? z.number().int()
        : declared.type === 'boolean'
          ? z.boolean()
          : z.string().min(1);
  const described = declared.description ? base.describe(declared.description) : base;
  return declared.required ? described : described.optional();
}

/** Same agent, same input (whitespace aside) from one parent: one run. */
function delegationKey(agent: string, input: Record<string, unknown>): string {
  const normalized = Object.entries(input)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => [key, typeof value === 'string' ? value.replace(/\s+/g, ' ').trim() : value]);
  return `${agent}\u0000${JSON.stringify(normalized)}`;
}

/** Reusing earlier results of this agent within the session (seed 000's cached result with a TTL). */
export interface ReuseOptions {
  memory: ResultMemory;
  ttlMs: number;
  /** The child's model: a result from another model is not the same result. */
  model: string;
  /** False: results are kept for later questions, but none kept earlier is handed back (a regenerated answer). */
  recall?: false;
}

export interface AgentToolOptions {
  /** Characters of the child's result the parent model sees. */
  maxResultChars: number;
  /** Set when the tree belongs to a session and reuse is on for this agent. */
  reuse?: ReuseOptions | undefined;
  /** The id the child a tool call starts will have (a background run's, which the parent is told at once). */
  runIdFor?: (toolCallId: string) => string;
}

/**
 * Binds a sub-agent to a parent run as a tool. Enforces, in this order: the per-step fan-out limit, the
 * one-run-per-identical-request rule, and the sibling concurrency limit; then runs the child and adds its
 * subtree usage to the parent's. The parent model sees at most `maxResultChars` of the child's result.
 * With `reuse`, an `ok` result of the same request earlier in the session, fresher than its TTL, is handed
 * back instead of a new run, and the tool call is marked `reused` with the run it came from.
 */
export function bindAgentTool(
  parent: RunFrame,
  definition: AgentDefinition,
  startChild: StartChild,
  options: AgentToolOptions,
): Tool {
  const { maxResultChars, reuse, runIdFor } = options;
  return tool({
    description: definition.description,
    inputSchema: sdkSchema(agentToolInput(definition)),
    execute: async (given: Record<string, unknown>, options: { toolCallId: string }) => {
      const { toolCallId } = options;
      refuseBoundedCall(parent, toolCallId, definition.name, given);
      // Whether it runs in the background is how, not what: the same task either way is one run.
      const background = wantsBackground(definition, given) && backgroundRoom(parent);
      const input = definition.background === 'allowed' ? withoutKey(given, 'background') : given;
      parent.stepDelegations++;
      if (parent.stepDelegations > parent.limits.maxFanOut) {
        const message = `refused: at most ${parent.limits.maxFanOut} delegations per step; ask for the rest in a later step`;
        emitRefusedCall(parent, { toolCallId, name: definition.name, input }, message);
        throw new ModelBehaviorError('fan_out', message, { limit: parent.limits.maxFanOut });
      }
      const key = delegationKey(definition.name, input);
      const earlier = parent.delegations.get(key);
      if (earlier) {
        emit(parent, { type: 'tool-call', toolCallId, name: definition.name, input, deduplicated: true });
        const envelope = await earlier;
        const failed = delegationFailure(envelope);
        emit(parent, {
          type: 'tool-result',
          toolCallId,
          name: definition.name,
          ok: !failed,
          output: envelope,
          ...(failed ? { error: failed } : {}),
          ms: 0,
        });
        return envelope;
      }
      const { task, ...inputs } = input;
      if (background && runIdFor) {
        const started = delegateInBackground(
          parent,
          { definition, task: String(task), inputs, toolCallId },
          given,
          startChild,
          runIdFor,
          maxResultChars,
        );
        return started;
      }
      const resultKey = reuse && parent.tree.sessionId ? keyFor(parent, definition, input, reuse) : undefined;
      const runChild = () =>
        traceToolCall(
          parent,
          { toolCallId, name: definition.name, input },
          () =>
            journaledCall(parent, toolCallId, async () => {
              // The parent's step usage must be counted before a child decides whether the budget allows it.
              await Promise.race([parent.stepUsageKnown, aborted(parent.signal)]);
              const release = await parent.siblings.acquire(parent.signal);
              try {
                const envelope = await startChild({
                  definition,
                  task: String(task),
                  inputs,
                  parent,
                  toolCallId,
                });
                return childReturned(parent, envelope);
              } finally {
                release();
              }
            }),
          delegationFailure,
        );
      const run = (async () => {
        const fresh =
          resultKey && reuse && reuse.recall !== false
            ? await recallFresh(parent, reuse, resultKey)
            : undefined;
        if (fresh) {
          emit(parent, {
            type: 'tool-call',
            toolCallId,
            name: definition.name,
            input,
            reused: { runId: fresh.envelope.runId, finishedAt: new Date(fresh.finishedAt).toISOString() },
          });
          emit(parent, {
            type: 'tool-result',
            toolCallId,
            name: definition.name,
            ok: true,
            output: fresh.envelope,
            ms: 0,
          });
          if (fresh.envelope.untrusted) parent.readUntrusted = true;
          return fresh.envelope;
        }
        const envelope = await runChild();
        if (resultKey && reuse && envelope.status === 'ok') {
          await reuse.memory
            .remember(resultKey, { envelope, finishedAt: parent.tree.now() })
            .catch(() => undefined);
        }
        return envelope;
      })();
      parent.delegations.set(key, run);
      parent.children.add(run);
      return run;
    },
    toModelOutput: ({ output }: { output: ResultEnvelope | BackgroundStart }) => ({
      type: 'json' as const,
      value: (isBackgroundStart(output)
        ? { status: output.status, run_id: output.runId, summary: output.summary }
        : toModelView(output, maxResultChars, definition.name)) as any,
    }),
  } as any) as Tool;
}

/** Statuses after which a sub-agent handed back no usable answer: its delegation call did not succeed. */
const FAILED_STATUSES = new Set(['error', 'cancelled', 'timeout', 'budget', 'interrupted']);

/**
 * Why a delegation that came back is a failed call, or undefined when it succeeded (ok, partial, or a
 * forced answer after max_turns). The envelope is kept either way; this is what the tool call says.
 */
export function delegationFailure(envelope: ResultEnvelope): string | undefined {
  if (!FAILED_STATUSES.has(envelope.status)) return undefined;
  const reason = envelope.summary.split('\n').find((line) => line.trim()) ?? '';
  return `sub-agent run ${envelope.runId} ended ${envelope.status}${reason ? `: ${reason.slice(0, 300)}` : ''}`;
}

function keyFor(
  parent: RunFrame,
  definition: AgentDefinition,
  input: Record<string, unknown>,
  reuse: ReuseOptions,
): ResultKey {
  return {
    userId: parent.tree.userId,
    sessionId: parent.tree.sessionId ?? '',
    agent: definition.name,
    model: reuse.model,
    input: delegationKey(definition.name, input).split('\u0000')[1] ?? '',
  };
}

/** The remembered result for `key` when it is `ok` and younger than the TTL; a failing store means none. */
async function recallFresh(parent: RunFrame, reuse: ReuseOptions, key: ResultKey) {
  const remembered = await reuse.memory.recall(key).catch(() => undefined);
  if (remembered?.envelope.status !== 'ok') return undefined;
  return parent.tree.now() - remembered.finishedAt <= reuse.ttlMs ? remembered : undefined;
}

function withoutKey(input: Record<string, unknown>, key: string): Record<string, unknown> {
  const { [key]: _left, ...rest } = input;
  return rest;
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
