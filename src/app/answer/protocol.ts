/**
 * What `POST /api/chat` streams besides AI SDK's own chunks, and what a stored session message holds.
 * The server writes these parts and the web app reads them; both import these types, so they cannot drift.
 *
 * The stream is AI SDK's UI message stream, so a plain `useChat` client shows something sensible:
 * - the main agent's text as text parts;
 * - the main agent's tool calls (delegations included) as dynamic tool parts, the envelope as the output;
 * - one persistent `data-run` part per run of the tree, keyed by run id, written when the run starts and
 *   replaced (same id) when it ends. It carries the run's header and outcome, never its growing history;
 * - transient `data-run-event` parts carrying the runs' events as deltas (text, reasoning, tool calls and
 *   results, plan updates, step usage). They are not kept in the message: a client folds them.
 *
 * Every byte on the wire is therefore sent once: deltas as they happen, headers at start and end. The
 * stored copy of each `data-run` part adds the folded history (`text`, `toolCalls`, `plan`), so a reload
 * shows what was seen live without the wire ever carrying a growing snapshot.
 *
 * To keep that promise three things are never repeated on the wire:
 * - the root run's text, reasoning, tool calls and tool results travel only as text, reasoning and
 *   dynamic tool parts (no `data-run-event` for them); its plan updates and step usage do travel as events;
 * - a run's summary, when it is the end of the text the run streamed, is left out of the closing
 *   `data-run` part and `summaryChars` says how long it is: `summary = text.trimEnd().slice(-summaryChars)`
 *   where `text` is the run's streamed text (the root's: its text parts joined in order);
 * - a delegation's tool output is its envelope without `summary` (the child's `data-run` part, found by
 *   the envelope's `runId`, has it).
 * Stored sessions always carry `summary` in full.
 *
 * Approvals (any run, root included) travel as `data-run-event` parts like every other event:
 * `approval-request` {approvalId, toolCallId, name, input, path: [{runId, agent}…], expiresAt, warning?} when
 * a call starts waiting (`warning`: the call may have run already, started by an attempt that was
 * interrupted; show it before the person decides), `approval-result` {approvalId, toolCallId, name,
 * approved, by, reason?} when it is decided (by a person, a flag, `timeout`, or `cancelled`). A client answers with
 * `POST /api/approvals/:approvalId {approved: boolean, reason?: string}` (200 `{approvalId, approved}`;
 * 404 when it is no longer pending) and lists what is waiting for its user with `GET /api/approvals`
 * (`{approvals: ApprovalRequest[]}`), e.g. after a reload. A denied call's tool-result carries the reason.
 */
import type { UIMessage } from 'ai';
import type { BackgroundDelivery, CadreEvent } from '../../core/events.ts';
import type { RunToolCall, RunView } from '../../core/run-view.ts';
import type { RunState } from '../../core/status.ts';
import type { Cost, Usage } from '../../core/usage.ts';

/** One tool call of a run as a `data-run` part stores it: the run view's call (RunToolCall), without the diff. */
export type RunToolCallView = Omit<RunToolCall, 'diff'>;

/**
 * The data of a `data-run` part (id = runId): a part of the run's view (RunView, core/run-view.ts, the one
 * run shape), rendered by `runPart` (its header and outcome, on the wire) and `storedRunPart` (with its
 * folded history: `text`, `toolCalls`, `plan`, `steps`, only in stored sessions; live clients fold
 * `data-run-event` parts into their own views). `summaryChars` is wire only: the summary is the last
 * `summaryChars` characters of the run's streamed text, trimmed. `cost`/`subtreeCost`: what `usage` and
 * `subtreeUsage` cost, when the run's model has a configured price (config `pricing`).
 */
export type RunPartData = Pick<
  RunView,
  'runId' | 'parentRunId' | 'rootRunId' | 'depth' | 'agent' | 'task' | 'model' | 'status' | 'startedAt'
> &
  Partial<
    Pick<
      RunView,
      | 'endedAt'
      | 'parentToolCallId'
      | 'forked'
      | 'background'
      | 'continues'
      | 'summary'
      | 'error'
      | 'data'
      | 'sources'
      | 'stoppedBy'
      | 'usage'
      | 'subtreeUsage'
      | 'cost'
      | 'subtreeCost'
      | 'text'
      | 'plan'
      | 'steps'
      | 'messages'
    >
  > & { summaryChars?: number; toolCalls?: RunToolCallView[] };

/** Message metadata of the assistant message: which tree answered, and how it ended. */
export interface ChatMessageMetadata {
  sessionId: string;
  rootRunId?: string;
  status?: RunState;
  usage?: Usage;
  /** What `usage` cost, when a price is configured for the models that answered (config `pricing`). */
  cost?: Cost;
  /** Whether the seed-000 delegation mode (prefetch/delegate) was used for this answer. */
  delegationUsed?: boolean;
  /**
   * On a person's question that follows up a finished sub-agent run (the card's "Ask … a follow-up"): the
   * run it continues and its agent, which answers it (app/follow-up.ts).
   */
  followUp?: { runId: string; agent: string };
}

/** The custom data parts of Cadre's UI messages, for `UIMessage<ChatMessageMetadata, CadreDataParts>`. */
// A type alias (not an interface) so it fits AI SDK's `UIDataTypes` without an index signature, which
// would make every part's data `unknown`.
export type CadreDataParts = {
  run: RunPartData;
  'run-event': CadreEvent;
  /** On a person's message: a document attached to it (shown as a chip; the agent reads it first). */
  attachment: AttachmentData;
  /**
   * Transient, before an answer starts: no worker has taken the question from the queue yet; `rootRunId`
   * is the id its tree's root will have (stopping that run withdraws the question).
   */
  queued: { message: string; rootRunId?: string };
  /**
   * In an answer: a sub-agent that ran in the background has ended and its result reached the main agent
   * (what the main agent says next answers it; after the answer's end, a new turn). Kept with the answer.
   */
  background: BackgroundDelivery;
  /**
   * In an answer (id = the message's id): a person's message that reached the main agent while it was
   * answering (`POST /api/runs/:id/messages` on the root, `cadre runs say ROOT`, the page's message box
   * while the main agent waits for its background runs). What the main agent says next answers it. Kept
   * with the answer.
   */
  said: { text: string };
};

/** A document attached to a question (`data-attachment` part). */
export interface AttachmentData {
  documentId: string;
  title: string;
}

/** A Cadre chat message as `useChat` holds it and `GET /api/sessions/:id` returns it. */
export type CadreUIMessage = UIMessage<ChatMessageMetadata, CadreDataParts>;
