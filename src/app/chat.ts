import type { CadreEvent } from '../core/events.ts';
import type { RunOutcome } from '../core/runtime.ts';
import type { Cadre } from './create-cadre.ts';

/** One message of a person in a session, and how to answer it (the HTTP chat door's shape of `ask`). */
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
 * Answers one message in a session through the `ask` use case: the session is made for this user if it
 * is new (someone else's id is "not found"), the person's message is stored before the run starts, and
 * the answer when it ends, whether or not anyone is still listening.
 */
export async function chat(cadre: Cadre, request: ChatRequest): Promise<RunOutcome> {
  const run = await cadre.ask({
    userId: request.userId,
    sessionId: request.sessionId,
    createSession: true,
    message: request.message.text,
    ...(request.message.id ? { messageId: request.message.id } : {}),
    ...(request.message.parts !== undefined ? { messageParts: request.message.parts } : {}),
    ...(request.agent ? { agent: request.agent } : {}),
    ...(request.model ? { model: request.model } : {}),
    ...(request.onEvent ? { onEvent: request.onEvent } : {}),
    ...(request.answerMessage ? { answerMessage: request.answerMessage } : {}),
    ...(request.maxConcurrentChats !== undefined ? { maxConcurrent: request.maxConcurrentChats } : {}),
  });
  const { envelope, run: tree } = await run.result;
  return { envelope, tree };
}
