import type { ModelMessage } from 'ai';
import { UserError } from '../core/errors.ts';
import type { CadreEvent } from '../core/events.ts';
import type { RunOutcome } from '../core/runtime.ts';
import { beginAnswer } from './ask.ts';
import type { Cadre } from './create-cadre.ts';

/** A stateless request (the OpenAI-compatible door): the caller sends the whole conversation each time. */
export interface CompleteRequest {
  userId: string;
  /** The agent that answers (`main` for the model name `cadre`). */
  agent: string;
  /** The new task: the conversation's last user message. */
  task: string;
  /** What came before it. */
  history: ModelMessage[];
  /** Stops the tree (the caller went away). */
  signal?: AbortSignal;
  onEvent?: (event: CadreEvent) => void;
  maxConcurrentChats?: number;
}

/**
 * Runs one agent on a conversation the caller keeps (no session is stored; the runs are, for the user),
 * cancellable through `cadre.live` like any other tree and counted against the same per-user limit.
 */
export async function complete(cadre: Cadre, request: CompleteRequest): Promise<RunOutcome> {
  const { userId } = request;
  if (!request.task.trim()) throw new UserError('empty_message', 'The last message has no text.');
  // The slot is taken with no await after the check, so requests arriving at once cannot all pass it.
  const live = beginAnswer(cadre, userId, request.maxConcurrentChats);
  const runtime = await (async () => {
    const runtime = await cadre.runtime({ userId });
    runtime.agent(request.agent);
    return runtime;
  })().catch((error: unknown) => {
    // Refused before the tree started: its slot is free again.
    live.end();
    throw error;
  });
  const stop = () => live.cancel('the caller went away');
  request.signal?.addEventListener('abort', stop, { once: true });
  try {
    return await runtime.run({
      agent: request.agent,
      task: request.task,
      history: request.history,
      signal: live.signal,
      userId,
      onEvent: (event) => {
        live.observe(event);
        request.onEvent?.(event);
      },
    });
  } finally {
    request.signal?.removeEventListener('abort', stop);
    await cadre.store.runs.flush();
    live.end();
  }
}

/** The agents a caller may name (enabled ones), `main` first. */
export async function enabledAgents(
  cadre: Cadre,
  userId: string,
): Promise<Array<{ name: string; description: string }>> {
  const runtime = await cadre.runtime({ userId });
  const agents = [...runtime.options.agents.values()].filter((agent) => agent.enabled);
  agents.sort((a, b) => (a.name === 'main' ? -1 : b.name === 'main' ? 1 : a.name.localeCompare(b.name)));
  return agents.map((agent) => ({ name: agent.name, description: agent.description }));
}
