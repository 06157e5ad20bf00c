import { createHash } from 'node:crypto';
import type { ModelMessage } from 'ai';
import { CadreError, UserError } from '../core/errors.ts';
import { sessionTitle } from '../core/session-title.ts';
import type { NewMessage, Store, StoredMessage } from '../store/store.ts';
import { followUpMarkOf } from './follow-up.ts';
import type { LiveRuns } from './live-runs.ts';
import { unknownSession } from './sessions.ts';

/**
 * A session's turn semantics: which session a question goes to (made when new and allowed), what the
 * model is given as history, a question sent again replacing what followed it, one answer at a time, and
 * the answer stored only while its question is still there.
 */
export interface SessionTurnParts {
  store: Pick<Store, 'sessions' | 'runs'>;
  live: LiveRuns;
}

export interface QuestionRequest {
  userId: string;
  sessionId?: string;
  createSession?: boolean;
  /** The client's id for the person's message; a stored question's id means it is sent again. */
  messageId?: string;
  messageParts?: unknown;
  /** Stored as the question's metadata (a follow-up's mark: follow-up.ts). */
  messageMetadata?: unknown;
}

export interface StoredQuestion {
  sessionId: string;
  /** The session's messages before the question, as the model's history. */
  history: ModelMessage[];
  question: { id: string; createdAt: string };
  /** The question was one already in the session, sent again (regenerate, edit, retry). */
  resent: boolean;
}

/** Longest a resend waits for the answers it stopped to end and be stored before replacing their questions. */
const RESEND_WAIT_MS = 10_000;

/**
 * Stores the person's question in its session, for the tree `slot` about to answer it. A question sent
 * again replaces itself and what followed it (answers still running to those stop first and are stored,
 * so none lands after the new question). A new question while another answer is still being written in
 * the session is refused: answers would interleave (question 1, question 2, answer 1, answer 2).
 */
export async function storeQuestion(
  parts: SessionTurnParts,
  request: QuestionRequest,
  text: string,
  slot: { inSession: (sessionId: string, question?: string, answerId?: string) => void },
  answerId: string,
): Promise<StoredQuestion> {
  const { userId } = request;
  const work = async (): Promise<StoredQuestion> => {
    const { sessionId, history, replaced, answered } = await openSession(parts, request, text);
    if (replaced) {
      const questions = new Set(replaced);
      // A tool that ignores its abort is not waited for past RESEND_WAIT_MS: its answer, when it comes,
      // finds its question gone and is not kept (appendAnswer).
      const { ended } = parts.live.cancelSession(userId, sessionId, 'its question was sent again', questions);
      await withinMs(ended, RESEND_WAIT_MS);
      // What it replaces is kept as an earlier version of the answer (or of the question and answer); a
      // question that never had an answer (its request failed) leaves nothing worth keeping.
      await parts.store.sessions.removeFrom(userId, sessionId, replaced[0]!, { keep: answered === true });
    } else if (request.sessionId) {
      await refuseWhileAnswering(parts, userId, sessionId);
    }
    const question = await appendQuestion(parts.store.sessions, userId, sessionId, {
      role: 'user',
      content: text,
      ...(request.messageId ? { id: request.messageId } : {}),
      ...(request.messageParts === undefined ? {} : { parts: request.messageParts }),
      ...(request.messageMetadata === undefined ? {} : { metadata: request.messageMetadata }),
    });
    slot.inSession(sessionId, question.id, answerId);
    return {
      sessionId,
      history,
      question: { id: question.id, createdAt: question.createdAt },
      resent: replaced !== undefined,
    };
  };
  // One question at a time is stored in a session, up to its answer being registered there: two sent at
  // once (a double click, two tabs) would otherwise both read the session before either wrote.
  return request.sessionId ? parts.live.inTurn(userId, request.sessionId, work) : work();
}

/**
 * Refuses a new question while an answer is being written in the session, here or by another cadre
 * process on the same store (a terminal's `cadre chat` beside the web app).
 */
async function refuseWhileAnswering(
  parts: SessionTurnParts,
  userId: string,
  sessionId: string,
): Promise<void> {
  const here = parts.live.answerIn(userId, sessionId);
  let runId = here?.rootRunId;
  if (!here) {
    // Runs of processes that died since are closed first: they are not answering any more.
    await parts.store.runs.markInterrupted();
    const running = await parts.store.runs.listRuns(userId, { sessionId, status: 'running', limit: 1 });
    if (!running.length) return;
    runId = running[0]!.id;
  }
  throw new UserError(
    'answer_running',
    `An answer is still being written in session ${sessionId}${runId ? ` (run ${runId})` : ''}; wait for it to finish or stop it, then ask again.`,
    { sessionId, ...(runId ? { runId } : {}) },
  );
}

/**
 * Stores an answer in its session. A session deleted while the answer ran (which stops it) has nowhere to
 * keep it: the run and its events stay under `runs`, and the answer is not an error for whoever waits.
 */
export async function appendAnswer(
  sessions: Store['sessions'],
  userId: string,
  sessionId: string,
  message: NewMessage,
  question?: { id: string; createdAt: string },
): Promise<void> {
  try {
    // An answer whose question was sent again or edited meanwhile (by another process, or after the resend
    // stopped waiting for it) is not kept: the session has no question for it any more.
    if (question) await sessions.appendReply(userId, sessionId, question, message);
    else await sessions.append(userId, sessionId, message);
  } catch (error) {
    if (UserError.isInstance(error) && error.code === 'unknown_session') return;
    throw error;
  }
}

/** Resolves when `promise` settles or after `ms`, whichever comes first. */
function withinMs(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return Promise.race([promise.then(() => {}), timeout]).finally(() => clearTimeout(timer));
}

/**
 * The caller's session (made if new and allowed) and its messages so far, as the model's history. When
 * the request's message id names one of the session's own questions, the history is what came before it,
 * and `replaced` the ids of that question and every message after it, in order (`answered`: one of them
 * is an answer).
 */
async function openSession(
  parts: SessionTurnParts,
  request: QuestionRequest,
  text: string,
): Promise<{ sessionId: string; history: ModelMessage[]; replaced?: string[]; answered?: boolean }> {
  const { userId } = request;
  const sessions = parts.store.sessions;
  if (!request.sessionId) {
    const created = await sessions.create(userId, { title: sessionTitle(text) });
    return { sessionId: created.id, history: [] };
  }
  const existing = await sessions.get(userId, request.sessionId);
  if (existing) {
    const clientId = request.messageId;
    const ids = clientId ? [clientId, ownIdFor(existing.id, clientId)] : [];
    const at = existing.messages.findIndex((message) => message.role === 'user' && ids.includes(message.id));
    const history = historyOf(at === -1 ? existing.messages : existing.messages.slice(0, at));
    const tail = existing.messages.slice(at);
    const replaced = tail.map((message) => message.id);
    const answered = tail.some((message) => message.role === 'assistant');
    return { sessionId: existing.id, history, ...(at === -1 ? {} : { replaced, answered }) };
  }
  if (!request.createSession) throw unknownSession(request.sessionId);
  try {
    await sessions.create(userId, { id: request.sessionId, title: sessionTitle(text) });
  } catch (error) {
    if (!CadreError.isInstance(error) || error.code !== 'session_exists') throw error;
    // The caller's own, made by a request of theirs that got here first (two first messages at once): it
    // is used. (Sessions are keyed by user: another user's session of this id is never in the way.)
    const made = await sessions.get(userId, request.sessionId);
    if (!made) throw unknownSession(request.sessionId);
    return { sessionId: made.id, history: historyOf(made.messages) };
  }
  return { sessionId: request.sessionId, history: [] };
}

/**
 * Stored messages as the model's history. A failed answer's stored text is an error message for the
 * person ("the model provider is not answering…"), not something the model said: it is left out, and only
 * what the model wrote before an error stopped it is kept. A person's follow-up of a sub-agent run and
 * its answer say so, so the main agent reads them as that agent's exchange, not as its own, with the
 * runs' ids (continue_agent reaches them in a later turn: the history keeps answers' text, not the tool
 * results that gave other runs' ids).
 */
export function historyOf(messages: readonly StoredMessage[]): ModelMessage[] {
  const history: ModelMessage[] = [];
  let followUp: { runId: string; agent: string } | undefined;
  for (const message of messages) {
    if (message.role === 'user') followUp = followUpMarkOf(message.metadata);
    const said = (content: string) =>
      !followUp
        ? content
        : message.role === 'user'
          ? `[A follow-up the person asked the sub-agent ${followUp.agent} directly, continuing its run ${followUp.runId}:]\n${content}`
          : `[The sub-agent ${followUp.agent} answered the person's follow-up${message.runId ? ` (its run ${message.runId})` : ''}:]\n${content}`;
    const status = (message.metadata as { status?: unknown } | undefined)?.status;
    if (message.role === 'assistant' && status === 'error') {
      const cut = message.content.lastIndexOf(STOPPED_BY_ERROR);
      if (cut > 0) history.push({ role: 'assistant', content: said(message.content.slice(0, cut).trim()) });
      continue;
    }
    history.push({ role: message.role, content: said(message.content) });
  }
  return history;
}

/** What a run's summary says after the text an error cut short (see run-agent.ts). */
const STOPPED_BY_ERROR = '\n\n[stopped by an error: ';

/**
 * Stores the person's message. The client's message id is only a hint: an id the session already has
 * (an answer's, or a message stored before ids were kept per session) makes it stored under an id of the
 * session's own instead of failing the request (`ownIdFor`: the same each time, so the question sent
 * again is still found). The session's own question sent again has been removed first (storeQuestion).
 */
async function appendQuestion(
  sessions: Store['sessions'],
  userId: string,
  sessionId: string,
  message: NewMessage,
): Promise<StoredMessage> {
  const { id: clientId, ...rest } = message;
  for (const id of clientId === undefined ? [] : [clientId, ownIdFor(sessionId, clientId)]) {
    try {
      return await sessions.append(userId, sessionId, { ...rest, id });
    } catch (error) {
      if (CadreError.isInstance(error)) throw error;
    }
  }
  return await sessions.append(userId, sessionId, rest);
}

/**
 * The id a question is stored under when its client's id is taken elsewhere (a client numbering its
 * messages per conversation): derived from the session and that id, so no other session has it.
 */
function ownIdFor(sessionId: string, clientId: string): string {
  return `msg_${createHash('sha256').update(`${sessionId}\n${clientId}`).digest('hex').slice(0, 32)}`;
}
