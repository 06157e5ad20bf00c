import type { CadreEvent } from '../core/events.ts';
import type { HttpCacheStore } from '../core/http-cache.ts';
import type { ResultMemory } from '../core/result-memory.ts';
import type { RunTree } from '../core/run-tree.ts';
import type { RunState } from '../core/status.ts';
import type { DocumentStore } from '../documents/document-store.ts';
import type { JobQueue } from './job-queue.ts';
import type { JournalStore } from './journal-store.ts';
import type { MigrationState } from './sql/migrations.ts';
import type { UserStore } from './user-store.ts';

/**
 * Cadre's storage, one async interface per concern. The SQLite implementation (`openSqliteStore`) is the
 * embedded default; another backend (PostgreSQL) implements the same interfaces and passes the same
 * contract suite (`store-contract.ts`). Every read that returns a person's data takes their user id and
 * answers only with what they own: someone else's id behaves exactly like an id that does not exist.
 */
export interface Store {
  runs: RunStore;
  sessions: SessionStore;
  documents: DocumentStore;
  settings: SettingsStore;
  httpCache: HttpCacheStore;
  /** Server users and their token hashes. */
  users: UserStore;
  /** Finished sub-agent results kept per session for reuse. */
  results: ResultMemory;
  /** Every completed model step and tool result of each tree, for resuming interrupted ones. */
  journal: JournalStore;
  /**
   * Runs as jobs, where the backend is shared by processes (PostgreSQL): the queue trees and sub-agent
   * runs go through to `cadre worker` processes. Absent in the embedded mode, where runs run in process.
   */
  jobs?: () => Promise<JobQueue>;
  /**
   * Reads where the database stands (it rejects when the database cannot be reached): the migrations it
   * lacks or has beyond this code's. `GET /ready` reports it.
   */
  health(): Promise<MigrationState>;
  /** Writes what is pending and releases the backend. */
  close(): Promise<void>;
}

/** One root run as listed, newest first. */
export interface RunSummary {
  id: string;
  agent: string;
  task: string;
  status: RunState;
  summary: string;
  model: string;
  sessionId: string | null;
  startedAt: string;
  endedAt: string | null;
  totalTokens: number | null;
}

/** A stored event with its replay cursor: the event's position in its tree, from 1, gap-free. */
export interface StoredEvent {
  cursor: number;
  event: CadreEvent;
}

/**
 * Runs and their events. `record` never blocks the run that emits (it queues, and writing happens off
 * the hot path); `flush` resolves once everything recorded so far is durable. A run belongs to the user
 * in its tree's `run-start` event.
 */
export interface RunStore {
  record(event: CadreEvent): void;
  /**
   * Makes what was recorded so far (and the journal's entries) survive a kill of this process; the
   * runtime calls it before each model request. Tool results, finished steps and run ends are secured
   * by the end of the event loop's turn anyway; this brings that forward.
   */
  secure(): void | Promise<void>;
  flush(): Promise<void>;
  /** The caller's root runs, newest first; optionally only one session's, or only those in one status. */
  listRuns(
    userId: string,
    options?: { limit?: number; sessionId?: string; status?: RunState },
  ): Promise<RunSummary[]>;
  /** The tree rooted at `runId`, or the subtree when `runId` is a child; undefined when not the caller's. */
  getRunTree(userId: string, runId: string): Promise<RunTree | undefined>;
  /** The id of the root of `runId`'s tree, when the run is the caller's. */
  rootOf(userId: string, runId: string): Promise<string | undefined>;
  /**
   * A tree's events after `after` (a cursor; 0 for all), in the order they were recorded. With `limit`,
   * one page: at most that many, and fewer once `maxChars` of them were read (at least one), so a reader
   * pages through a large tree instead of holding it whole.
   */
  events(userId: string, rootRunId: string, options?: EventPage): Promise<StoredEvent[]>;
  /** Removes a whole tree by its root's id; false when the caller has no root run by that id. */
  removeTree(userId: string, rootRunId: string): Promise<boolean>;
  /** Removes the caller's finished trees started before `before` (ms since the epoch); how many went. */
  prune(userId: string, options: { before: number }): Promise<number>;
  /**
   * Asks whichever process runs the caller's run `runId` to stop it (that process reads the request with
   * `takeStopRequests`): a tree's root stops the whole tree, any other run stops alone with its subtree
   * (its parent goes on). False when the caller has no such run running.
   */
  requestStop(userId: string, runId: string, reason: string): Promise<boolean>;
  /**
   * Calls `onRequest` when a stop may have been asked of a tree or a run, or a message left for a run (a
   * hint to `takeStopRequests` and `takeMessages`), from this process or another, with no timer (SQLite: a
   * watched file beside the database; PostgreSQL: NOTIFY), and once when watching has begun, for a stop
   * asked just before. Returns how to stop watching.
   */
  watchStops(onRequest: () => void): () => void;
  /**
   * Leaves `message` for the caller's running run `runId`, for whichever process runs it (it reads it with
   * `takeMessages`, woken as for a stop): false when the caller has no such run running.
   */
  sendMessage(userId: string, runId: string, message: RunMessage): Promise<boolean>;
  /** The messages left for any of these runs, oldest first; each is handed out once. */
  takeMessages(runIds: readonly string[]): Promise<Array<RunMessage & { runId: string }>>;
  /**
   * Keeps the caller's finished run `runId`'s conversation (the messages it would go on from), so a later
   * step, turn or process can continue it: `conversation` is its JSON, or null when it was too large to
   * keep (`chars` says how large). Kept again, the later one wins.
   */
  keepConversation(
    userId: string,
    runId: string,
    kept: { conversation: string | null; chars: number },
  ): Promise<void>;
  /**
   * The caller's run `runId` as continuing it needs it (its agent, its tree and session, its status) with
   * its kept conversation; undefined when the caller has no such run.
   */
  keptConversation(userId: string, runId: string): Promise<KeptConversation | undefined>;
  /** The stop requests for any of these runs (trees' roots or runs in them), with their reasons; each is handed out once. */
  takeStopRequests(runIds: readonly string[]): Promise<Map<string, string>>;
  /**
   * Closes as `interrupted` the runs still recorded as running whose process is gone (killed, its
   * terminal closed); returns their ids.
   */
  markInterrupted(): Promise<string[]>;
  /**
   * Calls `onChange` when any process stores events of the tree (a hint to read them; it may also come
   * for nothing). Where a backend can announce writes (PostgreSQL's NOTIFY); else followers poll.
   */
  watch?(rootRunId: string, onChange: () => void): Promise<() => void>;
}

/** A run as continuing it needs it, with its kept conversation (see `RunStore.keptConversation`). */
export type { KeptConversation } from '../core/kept-conversations.ts';

import type { KeptConversation } from '../core/kept-conversations.ts';

/** A person's message to a running run: it joins the run's conversation at its next model step. */
export type { RunMessage } from '../core/tree-record.ts';

import type { RunMessage } from '../core/tree-record.ts';

export interface StoredMessage {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  /** UI parts (sub-agent runs, tool calls) as the web app shows them; optional. */
  parts?: unknown;
  /** Front-door metadata of the message (e.g. the UI message's metadata); optional. */
  metadata?: unknown;
  runId?: string;
  createdAt: string;
}

export interface SessionSummary {
  id: string;
  title: string;
  createdAt: string;
  updatedAt: string;
}

/** A message found by `SessionStore.searchMessages`. */
export interface MessageMatch {
  sessionId: string;
  sessionTitle: string;
  messageId: string;
  role: string;
  /** The part of the message around the match, on one line. */
  line: string;
  createdAt: string;
}

export interface Session extends SessionSummary {
  /** The current branch: what the model is given as history and what a new question follows. */
  messages: StoredMessage[];
  /**
   * Earlier versions: messages a question sent again (regenerate) or edited replaced, oldest first. Each
   * is an alternative to what follows `afterId` in its branch (the current one or another version's).
   */
  versions: MessageVersion[];
}

/** Messages a resend or an edit replaced, kept as an earlier version of what followed `afterId`. */
export interface MessageVersion {
  id: string;
  /** The message the replaced ones followed; null when they began the session. */
  afterId: string | null;
  /** The replaced question, its answer and whatever followed them, as they were. */
  messages: StoredMessage[];
  replacedAt: string;
}

export interface NewMessage {
  role: 'user' | 'assistant';
  content: string;
  parts?: unknown;
  metadata?: unknown;
  runId?: string;
  id?: string;
}

/** Sessions and their messages; an appended message is durable when the promise resolves. */
export interface SessionStore {
  /** Creates a session; an id already taken (by anyone) is refused with a `UserError`. */
  create(userId: string, options?: { id?: string; title?: string }): Promise<SessionSummary>;
  get(userId: string, id: string): Promise<Session | undefined>;
  list(userId: string, options?: { limit?: number }): Promise<SessionSummary[]>;
  /** Appends to one of the caller's sessions; `UserError('unknown_session')` when it is not theirs. */
  append(userId: string, sessionId: string, message: NewMessage): Promise<StoredMessage>;
  /**
   * Appends an answer while the question it answers is still in the session as it was stored (its id and
   * when: a question sent again is stored anew under the same id); undefined when it is not, as after a
   * resend or an edit replaced it. `UserError('unknown_session')` when the session is not the caller's.
   */
  appendReply(
    userId: string,
    sessionId: string,
    question: { id: string; createdAt: string },
    message: NewMessage,
  ): Promise<StoredMessage | undefined>;
  /**
   * Removes message `messageId` of one of the caller's sessions and every message after it (a message sent
   * again, regenerated or edited replaces what followed it); resolves to how many went, 0 when the session
   * has no such message. `UserError('unknown_session')` when the session is not theirs. When the session's
   * first message goes, so does the title it gave the session: the next question titles it again. With
   * `keep`, the removed messages are kept as an earlier version (`Session.versions`) instead of deleted.
   */
  removeFrom(
    userId: string,
    sessionId: string,
    messageId: string,
    options?: { keep?: boolean },
  ): Promise<number>;
  /**
   * Makes an earlier version current again (the person continues from it): what now follows its
   * `afterId` becomes a version in its place (when it holds an answer), and the version's messages take
   * their place as they were stored. False when the session has no such version or its `afterId` message
   * is not in the current branch; `UserError('unknown_session')` when the session is not the caller's.
   */
  restoreVersion(userId: string, sessionId: string, versionId: string): Promise<boolean>;
  /** Gives one of the caller's sessions a new title; false when they have no session by that id. */
  rename(userId: string, id: string, title: string): Promise<boolean>;
  /**
   * The caller's own messages whose text matches `query` (full text: words, "phrases", prefix*, OR,
   * -excluded; see search-terms.ts), best first, at most `limit` (default 20): each with its session and
   * the matching line. Nothing of another user's is ever searched.
   */
  searchMessages(userId: string, query: string, options?: { limit?: number }): Promise<MessageMatch[]>;
  delete(userId: string, id: string): Promise<boolean>;
  /**
   * Calls `onChange` when a chat list may have changed: a session written, or a tree started or ended (a
   * session starts or stops answering), in this process or another on the same store, with no timer
   * (SQLite: `cadre.db-lists` beside the database; PostgreSQL: NOTIFY). It says which user's for no one:
   * each reader reads its own list again. Returns how to stop watching.
   */
  watchLists(onChange: () => void): () => void;
}

/** Small JSON values by scope and key (per-agent settings, a user's delegation mode). */
export interface SettingsStore {
  get(scope: string, key: string): Promise<unknown>;
  /** Every key of a scope with its value. */
  list(scope: string): Promise<Record<string, unknown>>;
  put(scope: string, key: string, value: unknown): Promise<void>;
  delete(scope: string, key: string): Promise<boolean>;
}

/** Which events of a tree to read: after a cursor, and as a page of at most `limit` / about `maxChars`. */
export interface EventPage {
  after?: number;
  limit?: number;
  maxChars?: number;
}
