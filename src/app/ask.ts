import { createHash, randomUUID } from 'node:crypto';
import type { ModelMessage } from 'ai';
import { prefetchTrigger } from '../config/prefetch-trigger.ts';
import type { Approver } from '../core/approvals.ts';
import type { ResultEnvelope } from '../core/envelope.ts';
import { CadreError, UserError } from '../core/errors.ts';
import type { CadreEvent, EventListener } from '../core/events.ts';
import type { RuntimeLimits } from '../core/limits.ts';
import type { RunTree } from '../core/run-tree.ts';
import type { RunOutcome, RunRequest } from '../core/runtime.ts';
import { sessionTitle } from '../core/session-title.ts';
import type { RunStatus } from '../core/status.ts';
import type { Usage } from '../core/usage.ts';
import type { ResumeSpec } from '../store/journal-store.ts';
import type { NewMessage, StoredEvent, StoredMessage } from '../store/store.ts';
import type { Cadre } from './create-cadre.ts';
import type { LiveRuns } from './live-runs.ts';
import type { DelegationSettings } from './settings.ts';

export interface AskRequest {
  /** The user the run acts for: their session, documents and settings. */
  userId: string;
  /** The person's new message. */
  message: string;
  /** Continue this session; without one a new session is made, titled after the message. */
  sessionId?: string;
  /**
   * When `sessionId` names no session of this user: make one with that id (a chat client that picks its
   * own ids) instead of refusing with `unknown_session`. Someone else's id is still "no such session".
   */
  createSession?: boolean;
  /** Ask this agent instead of `main`. */
  agent?: string;
  /** Overrides the asked agent's model, `provider:model`. */
  model?: string;
  /** The asked agent's declared inputs besides its task. */
  inputs?: Record<string, unknown>;
  /** Tighter (or looser) limits for this request only. */
  limits?: Partial<RuntimeLimits>;
  /** Limits of the asked agent's own run, over its definition's (`cadre ask --max-turns`, `--timeout`). */
  rootLimits?: RunRequest['rootLimits'];
  /** Stops the whole tree; the run ends `cancelled`. */
  signal?: AbortSignal;
  /** Stored with the person's message (e.g. the chat client's message id and UI parts). */
  messageId?: string;
  messageParts?: unknown;
  /** Every event of the tree, in order, as it happens (before any other reader sees it). */
  onEvent?: EventListener;
  /** The stored form of the answer (a front door's own parts and metadata); default: text only. */
  answerMessage?: (outcome: RunOutcome) => { id?: string; parts?: unknown; metadata?: unknown };
  /** Most trees this user may have running at once; more is refused before anything starts. */
  maxConcurrent?: number;
  /** Who decides this tree's approvals (the CLI's prompt or flags), instead of the pending list. */
  approver?: Approver;
}

export interface AskResult {
  answer: string;
  status: RunStatus;
  sessionId: string;
  runId: string;
  envelope: ResultEnvelope;
  /** The whole run tree, as `cadre ask --json` and `GET /api/runs/:id` show it. */
  run: RunTree;
  usage: Usage;
}

/** A started ask: its ids at once, its events as they happen, its result when it ends. */
export interface AskRun {
  sessionId: string;
  rootRunId: string;
  /** Every event of the tree after a cursor (0: from the first), live until the tree ends. */
  events(options?: { after?: number; signal?: AbortSignal }): AsyncIterable<StoredEvent>;
  /** Calls `listener` for each event from now on (with `replay`, every one so far first); returns a stopper. */
  subscribe(listener: EventListener, options?: { replay?: boolean }): () => void;
  /** The main answer as it is being written: text since the root's last tool-calling step. */
  answerSoFar(): string;
  /** Resolves when the tree has ended and the answer is stored; rejects only for system faults. */
  result: Promise<AskResult>;
  /** Stops the tree (as an explicit stop button does). */
  cancel(reason?: string): void;
}

/**
 * Asks one question in a session for one user: the person's message is stored before the run starts,
 * the answer after it ends (with its run id), whether or not anyone is still listening. The tree is
 * registered with `cadre.live`, so other requests can follow or stop it. Resolves once the tree's first
 * event is out, so a bad request (unknown session or agent, no model, too many running) rejects here,
 * before anything streams.
 */
export async function ask(cadre: Cadre, request: AskRequest): Promise<AskRun> {
  const { userId } = request;
  const text = request.message.trim();
  if (!text) throw new UserError('empty_message', 'The message has no text.');
  const live = beginAnswer(cadre, userId, request.maxConcurrent);
  const agent = request.agent ?? 'main';
  const { runtime, sessionId, history, question, resent, prefetch } = await (async () => {
    const runtime = await cadre.runtime({ userId, ...(request.limits ? { limits: request.limits } : {}) });
    // Check the agent, its model and the settings before anything is stored, so a refused request leaves
    // the session as it was (a resend has not removed what it would replace).
    await runtime.rootModel(agent, request.model);
    const prefetch =
      agent === 'main' ? prefetchFor(await cadre.settings.delegation(userId), text) : undefined;
    const storeQuestion = async () => {
      const { sessionId, history, replaced } = await openSession(cadre, request, text);
      if (replaced) {
        // The person sent one of the session's messages again (useChat's regenerate, an edit, a retry): it
        // and what followed are replaced. Answers still running to those questions stop first and are
        // stored, so none lands after the new question; then they go with the rest. (An answer to an
        // earlier question, another tab's, runs on.)
        const questions = new Set(replaced);
        // A tool that ignores its abort is not waited for past RESEND_WAIT_MS: its answer, when it comes,
        // finds its question gone and is not kept (appendAnswer).
        const { ended } = cadre.live.cancelSession(
          userId,
          sessionId,
          'its question was sent again',
          questions,
        );
        await withinMs(ended, RESEND_WAIT_MS);
        await cadre.store.sessions.removeFrom(userId, sessionId, replaced[0]!);
      }
      const question = await appendQuestion(cadre, userId, sessionId, {
        role: 'user',
        content: text,
        ...(request.messageId ? { id: request.messageId } : {}),
        ...(request.messageParts === undefined ? {} : { parts: request.messageParts }),
      });
      live.inSession(sessionId, question.id);
      return {
        sessionId,
        history,
        question: { id: question.id, createdAt: question.createdAt },
        resent: replaced !== undefined,
      };
    };
    // One question at a time is stored in a session, up to its answer being registered there: two sent at
    // once (a double click, two tabs) would otherwise both read the session before either wrote, and a
    // resend could not see, stop and replace the other's answer.
    const { sessionId, history, question, resent } = request.sessionId
      ? await cadre.live.inTurn(userId, request.sessionId, storeQuestion)
      : await storeQuestion();
    return { runtime, sessionId, history, question, resent, prefetch };
  })().catch((error: unknown) => {
    // Refused before the tree started: its slot is free again.
    live.end();
    throw error;
  });
  const signal = request.signal ? AbortSignal.any([request.signal, live.signal]) : live.signal;
  let answer = '';
  let started: (rootRunId: string) => void = () => {};
  const firstEvent = new Promise<string>((resolve) => {
    started = resolve;
  });
  // Every completed model step and tool result is committed here, so an interrupted tree can resume.
  const journalId = `jrn_${randomUUID()}`;
  const spec: ResumeSpec = {
    agent,
    task: text,
    history,
    inputs: request.inputs ?? {},
    sessionId,
    question,
    ...(request.model ? { model: request.model } : {}),
    ...(prefetch ? { prefetch } : {}),
    // Sent again for a different answer: its sub-agents run anew rather than hand back what they found.
    ...(resent ? { freshResults: true } : {}),
  };
  const outcome = runtime.run({
    agent,
    task: text,
    history,
    signal,
    sessionId,
    userId,
    journal: cadre.store.journal.create(journalId),
    ...(request.model ? { model: request.model } : {}),
    ...(request.inputs ? { inputs: request.inputs } : {}),
    ...(prefetch ? { prefetch } : {}),
    ...(request.approver ? { approver: request.approver } : {}),
    ...(request.rootLimits ? { rootLimits: request.rootLimits } : {}),
    ...(resent ? { freshResults: true } : {}),
    onEvent: (event) => {
      if (event.type === 'run-start' && event.parentRunId === null) {
        void cadre.store.journal.begin(journalId, event.runId, userId, spec);
      }
      answer = nextAnswer(answer, event);
      request.onEvent?.(event);
      live.observe(event);
      if (event.type === 'run-start' && event.parentRunId === null) started(event.runId);
    },
  });
  const result = outcome
    .then(async (done): Promise<AskResult> => {
      const { envelope, tree } = done;
      const stored = request.answerMessage?.(done) ?? {};
      await appendAnswer(
        cadre,
        userId,
        sessionId,
        {
          role: 'assistant',
          content: envelope.summary,
          runId: envelope.runId,
          ...(stored.id ? { id: stored.id } : {}),
          ...(stored.parts !== undefined ? { parts: stored.parts } : {}),
          ...(stored.metadata !== undefined ? { metadata: stored.metadata } : {}),
        },
        question,
      );
      return {
        answer: envelope.summary,
        status: envelope.status,
        sessionId,
        runId: envelope.runId,
        envelope,
        run: tree,
        usage: envelope.subtreeUsage,
      };
    })
    .finally(async () => {
      await cadre.store.runs.flush();
      live.end();
    });
  // Callers that only stream may never await the result; its failure is theirs to see in the events.
  result.catch(() => {});
  const rootRunId = await Promise.race([firstEvent, outcome.then((done) => done.envelope.runId)]);
  const tree = () => cadre.live.get(userId, rootRunId);
  return {
    sessionId,
    rootRunId,
    events: (options) => cadre.runs.events(userId, rootRunId, options),
    subscribe: (listener, options) => {
      const current = tree();
      if (!current) return () => {};
      return cadre.live.follow(current, options?.replay ? -1 : current.events.length - 1, listener, () => {});
    },
    answerSoFar: () => answer,
    result,
    cancel: (reason) => cadre.live.cancel(userId, rootRunId, reason),
  };
}

/**
 * Takes one of the user's slots for a running answer, refusing when `limit` are taken. The check and the
 * taking happen with no await between them, so requests arriving at once cannot all pass the check.
 */
export function beginAnswer(cadre: Cadre, userId: string, limit: number | undefined) {
  if (limit !== undefined && cadre.live.countFor(userId) >= limit) {
    throw new UserError(
      'too_many_chats',
      `At most ${limit} answers may run at once for one user; wait for one to finish or stop it.`,
      { limit },
    );
  }
  return cadre.live.begin(userId);
}

/**
 * Stores an answer in its session. A session deleted while the answer ran (which stops it) has nowhere to
 * keep it: the run and its events stay under `runs`, and the answer is not an error for whoever waits.
 */
export async function appendAnswer(
  cadre: Cadre,
  userId: string,
  sessionId: string,
  message: Parameters<Cadre['store']['sessions']['append']>[2],
  question?: { id: string; createdAt: string },
): Promise<void> {
  try {
    // An answer whose question was sent again or edited meanwhile (by another process, or after the resend
    // stopped waiting for it) is not kept: the session has no question for it any more.
    if (question) await cadre.store.sessions.appendReply(userId, sessionId, question, message);
    else await cadre.store.sessions.append(userId, sessionId, message);
  } catch (error) {
    if (UserError.isInstance(error) && error.code === 'unknown_session') return;
    throw error;
  }
}

/** Longest a resend waits for the answers it stopped to end and be stored before replacing their questions. */
const RESEND_WAIT_MS = 10_000;

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
 * and `replaced` the ids of that question and every message after it, in order.
 */
async function openSession(
  cadre: Cadre,
  request: AskRequest,
  text: string,
): Promise<{ sessionId: string; history: ModelMessage[]; replaced?: string[] }> {
  const { userId } = request;
  const sessions = cadre.store.sessions;
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
    const replaced = existing.messages.slice(at).map((message) => message.id);
    return { sessionId: existing.id, history, ...(at === -1 ? {} : { replaced }) };
  }
  if (!request.createSession) await cadre.sessions.get(userId, request.sessionId);
  try {
    await sessions.create(userId, { id: request.sessionId, title: sessionTitle(text) });
  } catch (error) {
    if (!CadreError.isInstance(error) || error.code !== 'session_exists') throw error;
    // Someone else's session: to this user it does not exist ("unknown_session"). The caller's own,
    // made by a request of theirs that got here first (two first messages at once): it is used.
    const made = await cadre.sessions.get(userId, request.sessionId);
    return { sessionId: made.id, history: historyOf(made.messages) };
  }
  return { sessionId: request.sessionId, history: [] };
}

/** Stored messages as the model's history. */
function historyOf(messages: readonly StoredMessage[]): ModelMessage[] {
  return messages.map((message) => ({ role: message.role, content: message.content }));
}

/**
 * Stores the person's message. The client's message id is only a hint: ids are unique across the whole
 * store, so one already taken (another session's, or another user's) is stored under an id of the
 * session's own instead of failing the request (`ownIdFor`: the same each time, so the question sent
 * again is still found). The session's own question sent again has been removed first: see ask.
 */
async function appendQuestion(
  cadre: Cadre,
  userId: string,
  sessionId: string,
  message: NewMessage,
): Promise<StoredMessage> {
  const { id: clientId, ...rest } = message;
  for (const id of clientId === undefined ? [] : [clientId, ownIdFor(sessionId, clientId)]) {
    try {
      return await cadre.store.sessions.append(userId, sessionId, { ...rest, id });
    } catch (error) {
      if (CadreError.isInstance(error)) throw error;
    }
  }
  return await cadre.store.sessions.append(userId, sessionId, rest);
}

/**
 * The id a question is stored under when its client's id is taken elsewhere (a client numbering its
 * messages per conversation): derived from the session and that id, so no other session has it.
 */
function ownIdFor(sessionId: string, clientId: string): string {
  return `msg_${createHash('sha256').update(`${sessionId}\n${clientId}`).digest('hex').slice(0, 32)}`;
}

/**
 * A live tree's events after a cursor (cursor = position + 1, the numbering the store uses), until it
 * ends or `signal` aborts. A tree that has already ended yields nothing here; the store has it.
 */
export async function* followLive(
  live: LiveRuns,
  userId: string,
  runId: string,
  options: { after?: number; signal?: AbortSignal } = {},
): AsyncGenerator<StoredEvent> {
  const tree = live.get(userId, runId);
  if (!tree) return;
  const queue: StoredEvent[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  const stop = live.follow(
    tree,
    (options.after ?? 0) - 1,
    (event, index) => {
      queue.push({ cursor: index + 1, event });
      wake?.();
    },
    () => {
      ended = true;
      wake?.();
    },
  );
  const onAbort = () => wake?.();
  options.signal?.addEventListener('abort', onAbort);
  try {
    while (!options.signal?.aborted) {
      const next = queue.shift();
      if (next) {
        yield next;
        continue;
      }
      if (ended) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
  } finally {
    stop();
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/** The answer being written: a new model call of the root starts a new one (what came before was thinking aloud between tool calls). */
function nextAnswer(answer: string, event: CadreEvent): string {
  if (event.depth !== 0) return answer;
  if (event.type === 'text-delta') return answer + event.delta;
  if (event.type === 'step-finish' && event.finishReason === 'tool-calls') return '';
  return answer;
}

/** The prefetch request for a question, when prefetch mode is on and its trigger matches. */
export function prefetchFor(delegation: DelegationSettings, question: string): { agent: string } | undefined {
  if (delegation.mode !== 'prefetch' || !delegation.prefetch) return undefined;
  return prefetchTrigger(delegation.prefetch.trigger).test(question)
    ? { agent: delegation.prefetch.agent }
    : undefined;
}
