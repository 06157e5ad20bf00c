import { UserError } from '../core/errors.ts';
import type { ResumeSpec } from '../store/journal-store.ts';
import type { MessageMatch, MessageVersion, Session, SessionSummary, StoredMessage } from '../store/store.ts';
import type { CadreParts } from './cadre-parts.ts';
import { followStored, Wakeup } from './follow-events.ts';
import { sweepOf } from './interrupted-sweep.ts';
import { forgetTreeJobs } from './jobs/forget-jobs.ts';
import { type PricedRunTree, priceTree } from './pricing.ts';
import { answerRunId, type SessionWithRuns } from './session-export.ts';
import type { TreeHandle } from './tree-handle.ts';
import { attachTree } from './trees.ts';

export type { MessageMatch, MessageVersion, Session, SessionSummary, StoredMessage };

/** Longest title a person may give a chat. */
export const MAX_TITLE_CHARS = 200;

/** A question whose answer was cut off by the process dying, and the run to resume. */
export interface InterruptedAnswer {
  runId: string;
  task: string;
  startedAt: string;
}

/** A session as the chat list shows it: whether an answer is being written in it right now. */
export interface SessionListing extends SessionSummary {
  answering: boolean;
}

/** A user's sessions: list, read, start, delete. Someone else's session is "no such session". */
export class SessionsUseCases {
  #parts: CadreParts;

  constructor(parts: CadreParts) {
    this.#parts = parts;
  }

  list(userId: string, options: { limit?: number } = {}): Promise<SessionSummary[]> {
    return this.#parts.store.sessions.list(userId, options);
  }

  /** The sessions, newest first, each marked when an answer is being written in it (here or elsewhere). */
  async listing(userId: string): Promise<SessionListing[]> {
    const [sessions, running] = await Promise.all([
      this.list(userId),
      this.#parts.store.runs.listRuns(userId, { status: 'running', limit: 200 }),
    ]);
    const answering = new Set(running.map((run) => run.sessionId).filter((id): id is string => id !== null));
    return sessions.map((session) => ({ ...session, answering: answering.has(session.id) }));
  }

  /**
   * The user's chat list, again each time it changes (a chat made, asked in, answered, renamed or deleted,
   * in this process or another on the same store: a terminal's \`cadre chat\`, a worker storing an
   * answer), first as it is now; until \`signal\` aborts. The store says when a list may have changed
   * (\`watchLists\`: in this process at once; SQLite's \`cadre.db-lists\` file, PostgreSQL's NOTIFY): the
   * list is read again then, and only then. No timer: an open page that nothing changes for costs nothing.
   */
  async *changes(userId: string, options: { signal: AbortSignal }): AsyncGenerator<SessionListing[]> {
    let last = '';
    const wakeUp = new Wakeup();
    const unwatch = this.#parts.store.sessions.watchLists(() => wakeUp.wake());
    const onAbort = () => wakeUp.wake();
    options.signal.addEventListener('abort', onAbort, { once: true });
    // Runs of processes that died are closed now and then, so their chats stop showing as answering.
    const release = sweepOf(this.#parts.store.runs).hold();
    try {
      while (!options.signal.aborted) {
        // A change said while the list is read is kept: it is read once more after.
        const listing = await this.listing(userId);
        const seen = JSON.stringify(listing);
        if (seen !== last) {
          last = seen;
          yield listing;
        }
        await wakeUp.wait();
      }
    } finally {
      options.signal.removeEventListener('abort', onAbort);
      unwatch();
      release();
    }
  }

  /**
   * The caller's messages that say what `query` says, best first, with the matching line: the chat list's
   * search. The last word counts as a beginning ("hero" finds "herons"), as a person is still typing it.
   */
  searchMessages(userId: string, query: string, options: { limit?: number } = {}): Promise<MessageMatch[]> {
    const typed = query.trim();
    const asTyped = /[\p{L}\p{N}_]$/u.test(typed) && !/(^|\s)-\S*$/.test(typed) ? `${typed}*` : typed;
    return this.#parts.store.sessions.searchMessages(userId, asTyped, options);
  }

  /** The session with its messages; `UserError('unknown_session')` when the caller has none by that id. */
  async get(userId: string, sessionId: string): Promise<Session> {
    const session = await this.#parts.store.sessions.get(userId, sessionId);
    if (!session) throw unknownSession(sessionId);
    return session;
  }

  /**
   * The answer being written in the session right now, in this process or in another cadre process on
   * the same store (a terminal's `cadre chat` beside the web app): its tree's handle and the id its stored
   * message will have, so a page opened meanwhile shows it live. Undefined when none is running.
   */
  async runningAnswer(
    userId: string,
    sessionId: string,
  ): Promise<{ tree: TreeHandle; answerId: string } | undefined> {
    const here = this.#parts.live.answerIn(userId, sessionId);
    let rootRunId = here?.rootRunId;
    let answerId = here?.answerId;
    if (!here) {
      // A read only: an answer whose process died is closed by the sweep its follower holds (attachTree).
      const { runs, journal } = this.#parts.store;
      rootRunId = (await runs.listRuns(userId, { sessionId, status: 'running', limit: 1 }))[0]?.id;
      if (rootRunId) answerId = (await journal.find(userId, rootRunId))?.spec.answerId;
    }
    if (!rootRunId || !answerId) return undefined;
    const tree = await attachTree(this.#parts, userId, rootRunId);
    return tree ? { tree, answerId } : undefined;
  }

  /**
   * The question of the session that waits on the queue (runs as jobs: no worker has taken its tree yet),
   * from whichever process asked it, or undefined: the id its answer will be stored under, and `started`,
   * which resolves with the answer once a worker has begun it (or with the tree's record once it was
   * withdrawn: it then says why), or with undefined when `signal` aborts first.
   */
  async waitingAnswer(
    userId: string,
    sessionId: string,
    signal: AbortSignal,
  ): Promise<
    | {
        rootRunId: string;
        answerId: string;
        started: Promise<{ tree: TreeHandle; answerId: string } | undefined>;
      }
    | undefined
  > {
    const { store } = this.#parts;
    if (!store.jobs) return undefined;
    const waiting = await (await store.jobs()).waitingTree(userId, sessionId);
    if (!waiting?.answerId) return undefined;
    const { rootRunId, answerId } = waiting;
    const started = (async () => {
      // Its root's first stored event: a worker began it (or its asker recorded it withdrawn).
      for await (const _ of followStored(store.runs, userId, rootRunId, {
        signal,
        stateEveryMs: Number.POSITIVE_INFINITY,
      })) {
        const tree = await attachTree(this.#parts, userId, rootRunId);
        return tree ? { tree, answerId } : undefined;
      }
      return undefined;
    })();
    return { rootRunId, answerId, started };
  }

  /**
   * Questions of the session whose answer never came because the process running it died: root runs
   * recorded as `interrupted` that no later attempt has resumed, oldest first. Each can be resumed.
   */
  async interrupted(userId: string, sessionId: string): Promise<InterruptedAnswer[]> {
    const { runs, journal, sessions } = this.#parts.store;
    const roots = await runs.listRuns(userId, { sessionId, status: 'interrupted', limit: 200 });
    // Read only when there is something to check: most sessions have no interrupted answer.
    const messages = roots.length ? ((await sessions.get(userId, sessionId))?.messages ?? []) : [];
    const open: InterruptedAnswer[] = [];
    for (const run of roots) {
      const found = await journal.find(userId, run.id);
      if (found?.attempts.at(-1) === run.id && !questionReplaced(messages, found.spec))
        open.push({ runId: run.id, task: run.task, startedAt: run.startedAt });
    }
    return open.reverse();
  }

  /**
   * Gives the session the title the person chose (trimmed; 1 to 200 characters); `UserError('bad_title')`
   * for an empty or longer one, `unknown_session` when the caller has no session by that id.
   */
  async rename(userId: string, sessionId: string, title: string): Promise<SessionSummary> {
    const chosen = title.replace(/\s+/g, ' ').trim();
    if (!chosen || chosen.length > MAX_TITLE_CHARS)
      throw new UserError('bad_title', `A chat's title has 1 to ${MAX_TITLE_CHARS} characters.`, {
        maxChars: MAX_TITLE_CHARS,
      });
    if (!(await this.#parts.store.sessions.rename(userId, sessionId, chosen)))
      throw unknownSession(sessionId);
    const { messages: _messages, ...summary } = await this.get(userId, sessionId);
    return summary;
  }

  /**
   * Makes an earlier version of the session current again, so the next question continues from it; what
   * it replaces is kept as a version in turn. Refused while an answer is being written in the session
   * (`answer_running`); `unknown_version` when the session has no such version in its current branch.
   */
  async restoreVersion(userId: string, sessionId: string, versionId: string): Promise<Session> {
    await this.get(userId, sessionId);
    const { live, store } = this.#parts;
    // Runs of processes that died since are closed first: they are not answering any more.
    if (!live.answerIn(userId, sessionId)) await store.runs.markInterrupted();
    const running =
      live.answerIn(userId, sessionId) ??
      (await store.runs.listRuns(userId, { sessionId, status: 'running', limit: 1 }))[0];
    if (running)
      throw new UserError(
        'answer_running',
        `An answer is still being written in session ${sessionId}; wait for it to finish or stop it, then switch versions.`,
        { sessionId },
      );
    if (!(await this.#parts.store.sessions.restoreVersion(userId, sessionId, versionId)))
      throw new UserError(
        'unknown_version',
        `Session ${sessionId} has no earlier version "${versionId}" after a message of its current branch.`,
        { sessionId, versionId },
      );
    return this.get(userId, sessionId);
  }

  /** The session with the run tree of each answer (priced where prices are configured), for an export. */
  async withRuns(userId: string, sessionId: string): Promise<SessionWithRuns> {
    const session = await this.get(userId, sessionId);
    const runs: PricedRunTree[] = [];
    for (const message of session.messages) {
      const runId = message.role === 'assistant' ? answerRunId(message) : undefined;
      const tree = runId ? await this.#parts.store.runs.getRunTree(userId, runId) : undefined;
      if (tree) runs.push(priceTree(tree, this.#parts.config.pricing));
    }
    return { session, runs };
  }

  create(userId: string, options: { id?: string; title?: string } = {}): Promise<SessionSummary> {
    return this.#parts.store.sessions.create(userId, options);
  }

  /**
   * Deletes the session and its messages (its runs stay, listed under `runs`). An answer still running in
   * it is stopped: nobody could read it, and its tokens would be spent for nothing.
   */
  async delete(userId: string, sessionId: string): Promise<void> {
    // An answer another cadre process is writing here cannot be stopped from this one: deleting under it
    // would let it run on and spend, then store its answer nowhere. Runs of processes that died since are
    // closed first (a long-lived `cadre serve` would otherwise see them running for ever).
    await this.#parts.store.runs.markInterrupted();
    const running = await this.#parts.store.runs.listRuns(userId, {
      sessionId,
      status: 'running',
      limit: 20,
    });
    const elsewhere = running.find((run) => !this.#parts.live.get(userId, run.id));
    if (elsewhere) {
      throw new UserError(
        'run_active',
        `Session ${sessionId} has an answer still running in another cadre process (run ${elsewhere.id}); stop it there (Ctrl-C) or wait for it to end.`,
        { sessionId, runId: elsewhere.id },
      );
    }
    // Their queued jobs (PostgreSQL mode) hold the session's questions and history: they go with it.
    const ended = this.#parts.store.jobs
      ? (await this.#parts.store.runs.listRuns(userId, { sessionId, limit: 10_000 })).filter(
          (run) => run.status !== 'running',
        )
      : [];
    const trees = [];
    for (const run of ended) {
      const tree = await this.#parts.store.runs.getRunTree(userId, run.id);
      if (tree) trees.push(tree);
    }
    if (!(await this.#parts.store.sessions.delete(userId, sessionId))) throw unknownSession(sessionId);
    await forgetTreeJobs(this.#parts.store, trees);
    this.#parts.live.cancelSession(userId, sessionId, 'its session was deleted');
  }
}

/**
 * Whether the question a journal's tree answers has left the session: sent again or edited, it was
 * replaced (the same id may be back, stored anew). Journals from before questions were recorded: no.
 */
export function questionReplaced(messages: readonly StoredMessage[], spec: ResumeSpec): boolean {
  const { question } = spec;
  if (!question) return false;
  return !messages.some((message) => message.id === question.id && message.createdAt === question.createdAt);
}

export function unknownSession(sessionId: string): UserError {
  return new UserError('unknown_session', `There is no session "${sessionId}". See: cadre sessions list`, {
    sessionId,
  });
}
