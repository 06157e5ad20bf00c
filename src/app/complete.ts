import { randomUUID } from 'node:crypto';
import type { ModelMessage } from 'ai';
import { UserError } from '../core/errors.ts';
import type { CadreEvent } from '../core/events.ts';
import type { RuntimeLimits } from '../core/limits.ts';
import type { RunOutcome, Runtime } from '../core/runtime.ts';
import type { ResumeSpec } from '../store/journal-store.ts';
import type { TreeHandle } from './tree-handle.ts';
import { reserveTree, type TreeParts } from './trees.ts';

/** A stateless request (the OpenAI-compatible door): the caller sends the whole conversation each time. */
export interface CompleteRequest {
  userId: string;
  /** The agent that answers (`main` for the model name `cadre`). */
  agent: string;
  /** The new task: the conversation's last user message. */
  task: string;
  /** What came before it. */
  history: ModelMessage[];
  /** The agent's declared inputs besides its task (an MCP caller's arguments). */
  inputs?: Record<string, unknown>;
  /** Stops the tree (the caller went away). */
  signal?: AbortSignal;
  onEvent?: (event: CadreEvent) => void;
  /** Called once when no worker has taken the tree yet (runs as jobs): see `TreeStart.onQueued`. */
  onQueued?: (rootRunId: string) => void;
  maxConcurrentChats?: number;
}

/** What `complete` needs of Cadre: the store, the live trees and a runtime per user. */
export interface CompleteParts extends TreeParts {
  runtime: (options: { userId: string; limits?: Partial<RuntimeLimits> }) => Promise<Runtime>;
}

/**
 * Starts one agent on a conversation the caller keeps (no session is stored; the runs are, for the user,
 * with a journal, so a tree cut off by a crash can be resumed), cancellable like any other tree and
 * counted against the same per-user limit. Resolves with the tree's handle once it has started.
 */
export async function complete(parts: CompleteParts, request: CompleteRequest): Promise<TreeHandle> {
  const { userId } = request;
  if (!request.task.trim()) throw new UserError('empty_message', 'The last message has no text.');
  // The slot is taken with no await after the check, so requests arriving at once cannot all pass it.
  const slot = reserveTree(parts.live, userId, request.maxConcurrentChats);
  const runtime = await (async () => {
    const runtime = await parts.runtime({ userId });
    runtime.agent(request.agent);
    return runtime;
  })().catch((error: unknown) => {
    // Refused before the tree started: its slot is free again.
    slot.end();
    throw error;
  });
  const spec: ResumeSpec = {
    agent: request.agent,
    task: request.task,
    history: request.history,
    inputs: request.inputs ?? {},
  };
  return parts.executor.start({
    userId,
    slot,
    signal: request.signal,
    onEvent: request.onEvent,
    onQueued: request.onQueued,
    journal: { id: `jrn_${randomUUID()}`, spec },
    runtime,
    finish: async (outcome: RunOutcome) => outcome,
  });
}

/** The agents a caller may name (enabled ones), `main` first. */
export async function enabledAgents(
  parts: Pick<CompleteParts, 'runtime'>,
  userId: string,
): Promise<Array<{ name: string; description: string }>> {
  const runtime = await parts.runtime({ userId });
  const agents = [...runtime.options.agents.values()].filter((agent) => agent.enabled);
  agents.sort((a, b) => (a.name === 'main' ? -1 : b.name === 'main' ? 1 : a.name.localeCompare(b.name)));
  return agents.map((agent) => ({ name: agent.name, description: agent.description }));
}
