import { randomUUID } from 'node:crypto';
import { prefetchTrigger } from '../config/prefetch-trigger.ts';
import type { Approver } from '../core/approvals.ts';
import type { ResultEnvelope } from '../core/envelope.ts';
import { UserError } from '../core/errors.ts';
import type { EventListener } from '../core/events.ts';
import type { RuntimeLimits } from '../core/limits.ts';
import type { RunTree } from '../core/run-tree.ts';
import type { RunProjection } from '../core/run-view.ts';
import type { RunRequest, Runtime } from '../core/runtime.ts';
import type { RunStatus } from '../core/status.ts';
import type { Usage } from '../core/usage.ts';
import type { ResumeSpec } from '../store/journal-store.ts';
import type { Store } from '../store/store.ts';
import type { AttachmentData } from './answer/protocol.ts';
import type { RuntimeOptions } from './cadre-parts.ts';
import { type FollowUp, type FollowUpMark, followUpOf } from './follow-up.ts';
import type { TreeSlot } from './live-runs.ts';
import { type Cost, type PricedRunTree, type Pricing, priceTree } from './pricing.ts';
import { type QuestionRequest, storeQuestion } from './session-turn.ts';
import type { DelegationSettings } from './settings.ts';
import type { TreeHandle } from './tree-handle.ts';
import { reserveTree, type TreeParts } from './trees.ts';

export { storeAnswer } from './stored-answers.ts';

export interface AskRequest {
  /** The user the run acts for: their session, documents and settings. */
  userId: string;
  /** The person's new message. */
  message: string;
  /** Continue this session; without one a new session is made, titled after the message. */
  sessionId?: string;
  /**
   * When `sessionId` names no session of this user: make one with that id (a chat client that picks its
   * own ids) instead of refusing with `unknown_session`. Sessions are keyed by user, so an id another
   * user has makes a session of this user's own, exactly as an unused id does.
   */
  createSession?: boolean;
  /** Ask this agent instead of `main`. */
  agent?: string;
  /**
   * Follow up this finished sub-agent run instead (a person's follow-up, see follow-up.ts): its agent
   * answers in its session, going on from its kept conversation; `agent` and `sessionId` are then its.
   */
  continues?: string;
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
  /** Documents the person attached to this message: the agent is told to read them first. */
  attachments?: AttachmentData[];
  /** Stored with the person's message (e.g. the chat client's message id and UI parts). */
  messageId?: string;
  messageParts?: unknown;
  /** Every event of the tree, in order, as it happens (before any other reader sees it). */
  onEvent?: EventListener;
  /** Called once when no worker has taken the question yet (runs as jobs): see `TreeStart.onQueued`. */
  onQueued?: (rootRunId: string) => void;
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
  run: PricedRunTree;
  usage: Usage;
  /** What `usage` cost, when prices are configured for the models that answered (config `pricing`). */
  cost?: Cost;
}

/** A started ask: the tree's handle, with the session it answers in and its answer's message id. */
export interface AskRun extends TreeHandle<AskResult> {
  sessionId: string;
  /** The id of the answer's stored message (and of the chat stream's message). */
  answerId: string;
  /**
   * The tree's runs as its events have told them so far: the one fold of them in this process (the one
   * the stored answer is made from), folded before any reader of `events` sees an event. A door draws
   * the tree from it rather than folding the events again.
   */
  projection: Pick<RunProjection, 'get' | 'children' | 'roots' | 'tree'>;
}

/** What `ask` needs of Cadre: the store, the live trees, a runtime per user and their delegation settings. */
export interface AskParts extends TreeParts {
  store: Pick<Store, 'runs' | 'journal' | 'sessions'>;
  /** The configured prices of models (config `pricing`): answers and run trees say what they cost. */
  pricing?: Pricing | undefined;
  runtime: (options: RuntimeOptions) => Promise<Runtime>;
  delegation: (userId: string) => Promise<DelegationSettings>;
}

/**
 * Asks one question in a session for one user: the person's message is stored before the run starts,
 * the answer (text and the tree's run parts, the stored form every door shares) after it ends, whether
 * or not anyone is still listening. Resolves once the tree's first event is out, so a bad request
 * (unknown session or agent, no model, too many running, an answer still running in the session)
 * rejects here, before anything streams.
 */
export async function ask(parts: AskParts, request: AskRequest): Promise<AskRun> {
  const { userId } = request;
  const written = request.message.trim();
  if (!written) throw new UserError('empty_message', 'The message has no text.');
  // The model reads the question with the documents it came with named (kept in the history too, so a
  // follow-up can still refer to them); the person's message shows them as chips (its parts).
  const text = withAttachments(written, request.attachments);
  const slot = reserveTree(parts.live, userId, request.maxConcurrent);
  const answerId = `msg_${randomUUID()}`;
  const { runtime, turn, prefetch, agent, followUp } = await (async () => {
    const followUp = request.continues
      ? await followUpOf(parts.store.runs, userId, request.continues)
      : undefined;
    const agent = followUp?.agent ?? request.agent ?? 'main';
    const runtime = await parts.runtime({ userId, ...(request.limits ? { limits: request.limits } : {}) });
    // Check the agent, its model and the settings before anything is stored, so a refused request leaves
    // the session as it was (a resend has not removed what it would replace).
    await runtime.rootModel(agent, request.model);
    const prefetch = agent === 'main' ? prefetchFor(await parts.delegation(userId), text) : undefined;
    const turn = await storeQuestion(
      parts,
      followUp ? followUpQuestion(request, followUp) : request,
      text,
      slot,
      answerId,
    );
    return { runtime, turn, prefetch, agent, followUp };
  })().catch((error: unknown) => {
    // Refused before the tree started: its slot is free again.
    slot.end();
    throw error;
  });
  const { sessionId, history, question, resent } = turn;
  const spec: ResumeSpec = {
    agent,
    task: text,
    // A follow-up goes on from its run's own conversation, not from the session's.
    history: followUp ? followUp.history : history,
    ...(followUp ? { continues: followUp.runId } : {}),
    inputs: request.inputs ?? {},
    sessionId,
    question,
    answerId,
    ...(request.model ? { model: request.model } : {}),
    ...(prefetch ? { prefetch } : {}),
    // Sent again for a different answer: its sub-agents run anew rather than hand back what they found.
    ...(resent ? { freshResults: true } : {}),
  };
  const handle = await startAnswer(parts, {
    userId,
    slot,
    runtime,
    spec,
    // Every completed model step and tool result is committed, so an interrupted tree can resume.
    journal: { id: `jrn_${randomUUID()}`, spec },
    request,
  });
  return { ...handle, sessionId, answerId };
}

/**
 * Starts a tree that answers in a session (a question, or the resume of one): the executor stores its
 * answer where the tree runs, when it ends, then the tree's result is `AskResult` (with `extra`).
 */
export async function startAnswer<Extra extends object = object>(
  parts: Pick<AskParts, 'store' | 'executor' | 'pricing'>,
  start: {
    userId: string;
    slot: TreeSlot;
    runtime: Runtime;
    spec: ResumeSpec;
    journal: { id: string; spec: ResumeSpec; resume?: boolean };
    request: Pick<AskRequest, 'signal' | 'onEvent' | 'onQueued' | 'approver' | 'rootLimits'>;
    extra?: Extra;
  },
): Promise<TreeHandle<AskResult & Extra> & Pick<AskRun, 'projection'>> {
  const { userId, spec, request } = start;
  return parts.executor.start({
    userId,
    slot: start.slot,
    signal: request.signal,
    onEvent: request.onEvent,
    onQueued: request.onQueued,
    journal: start.journal,
    runtime: start.runtime,
    approver: request.approver,
    rootLimits: request.rootLimits,
    finish: async ({ envelope, tree }) => ({
      ...askResult(spec.sessionId ?? '', envelope, tree, parts.pricing),
      ...(start.extra as Extra),
    }),
  });
}

/** A follow-up's question: in its run's session (one is made when it had none), marked as a follow-up. */
function followUpQuestion(request: AskRequest, followUp: FollowUp): QuestionRequest {
  const mark: FollowUpMark = { followUp: { runId: followUp.runId, agent: followUp.agent } };
  const { sessionId: _asked, ...rest } = request;
  return { ...rest, ...(followUp.sessionId ? { sessionId: followUp.sessionId } : {}), messageMetadata: mark };
}

/** What `ask` resolves to once the tree has ended. */
export function askResult(
  sessionId: string,
  envelope: ResultEnvelope,
  tree: RunTree,
  pricing?: Pricing,
): AskResult {
  const run = priceTree(tree, pricing);
  return {
    answer: envelope.summary,
    status: envelope.status,
    sessionId,
    runId: envelope.runId,
    envelope,
    run,
    usage: envelope.subtreeUsage,
    ...(run.subtreeCost ? { cost: run.subtreeCost } : {}),
  };
}

/** The prefetch request for a question, when prefetch mode is on and its trigger matches. */
export function prefetchFor(delegation: DelegationSettings, question: string): { agent: string } | undefined {
  if (delegation.mode !== 'prefetch' || !delegation.prefetch) return undefined;
  return prefetchTrigger(delegation.prefetch.trigger).test(question)
    ? { agent: delegation.prefetch.agent }
    : undefined;
}

/** The question as the model reads it: the attached documents named after it, to be read first. */
export function withAttachments(text: string, attachments: readonly AttachmentData[] | undefined): string {
  if (!attachments?.length) return text;
  const named = attachments.map((each) => `"${each.title}" (document id ${each.documentId})`).join(', ');
  return `${text}\n\n[Attached to this message: ${named}. Read ${attachments.length === 1 ? 'it' : 'them'} first (read_document or search_documents with that document id).]`;
}
