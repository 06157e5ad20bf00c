import type { ModelMessage } from 'ai';
import { UserError } from '../core/errors.ts';
import type { CadreEvent } from '../core/events.ts';
import type { RunOutcome } from '../core/runtime.ts';
import type { Cadre } from './create-cadre.ts';

/** One message of a person in a session, and how to answer it. */
export interface ChatRequest {
  userId: string;
  sessionId: string;
  /** The person's message; `id` keeps the client's own message id. */
  message: { id?: string; text: string; parts?: unknown };
  /** The agent that answers (default `main`). */
  agent?: string;
  model?: string;
  /** Every event of the answering tree, in order, as it happens. */
  onEvent?: (event: CadreEvent) => void;
  /** The stored form of the answer (a front door's own parts and metadata); default: text only. */
  answerMessage?: (outcome: RunOutcome) => { id?: string; parts?: unknown; metadata?: unknown };
  /** Most trees this user may have running at once; more is refused before anything starts. */
  maxConcurrentChats?: number;
}

/**
 * Answers one message in a session: creates the session for this user if it is new, stores the person's
 * message before the run starts, runs the tree (cancellable through `cadre.live`, and never tied to the
 * connection that asked), and stores the answer when it ends, whether or not anyone is still listening.
 */
export async function chat(cadre: Cadre, request: ChatRequest): Promise<RunOutcome> {
  const { userId, sessionId } = request;
  const text = request.message.text.trim();
  if (!text) throw new UserError('empty_message', 'The message has no text.');
  const limit = request.maxConcurrentChats;
  if (limit !== undefined && cadre.live.countFor(userId) >= limit) {
    throw new UserError(
      'too_many_chats',
      `At most ${limit} answers may run at once for one user; wait for one to finish or stop it.`,
      { limit },
    );
  }
  const session = openSession(cadre, userId, sessionId, text);
  const history: ModelMessage[] = session.messages.map((message) => ({
    role: message.role,
    content: message.content,
  }));
  const agent = request.agent ?? 'main';
  const runtime = cadre.runtime({ userId });
  // Check the agent before the message is stored, so a refused request leaves the session as it was.
  runtime.agent(agent);
  cadre.sessions.append(userId, sessionId, {
    role: 'user',
    content: text,
    ...(request.message.id ? { id: request.message.id } : {}),
    ...(request.message.parts !== undefined ? { parts: request.message.parts } : {}),
  });
  const live = cadre.live.begin(userId);
  try {
    const prefetch = agent === 'main' ? cadre.prefetchFor(text) : undefined;
    const outcome = await runtime.run({
      agent,
      task: text,
      history,
      signal: live.signal,
      sessionId,
      userId,
      ...(request.model ? { model: request.model } : {}),
      ...(prefetch ? { prefetch } : {}),
      onEvent: (event) => {
        live.observe(event);
        request.onEvent?.(event);
      },
    });
    const stored = request.answerMessage?.(outcome) ?? {};
    cadre.sessions.append(userId, sessionId, {
      role: 'assistant',
      content: outcome.envelope.summary,
      runId: outcome.envelope.runId,
      ...(stored.id ? { id: stored.id } : {}),
      ...(stored.parts !== undefined ? { parts: stored.parts } : {}),
      ...(stored.metadata !== undefined ? { metadata: stored.metadata } : {}),
    });
    return outcome;
  } finally {
    cadre.runs.flush();
    live.end();
  }
}

/** The session if it is this user's, a new one under that id if the id is free; another's is "not found". */
function openSession(cadre: Cadre, userId: string, sessionId: string, firstText: string) {
  const existing = cadre.sessions.get(userId, sessionId);
  if (existing) return existing;
  try {
    cadre.sessions.create(userId, { id: sessionId, title: firstText.slice(0, 80) });
  } catch (error) {
    // Someone else's session: to this user it does not exist.
    if (error instanceof UserError && error.code === 'session_exists')
      throw new UserError('not_found', `There is no session "${sessionId}".`, { sessionId });
    throw error;
  }
  return { messages: [] as Array<{ role: 'user' | 'assistant'; content: string }> };
}
