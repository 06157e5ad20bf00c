import type { ModelMessage } from 'ai';
import type { AgentDefinition } from './agent-definition.ts';
import type { ApprovalSettings } from './approval-settings.ts';
import type { BudgetLedger } from './child-runs.ts';
import type { CompletedCall, ResultEnvelope } from './envelope.ts';
import { RunHandedOff } from './errors.ts';
import type { CadreEvent, EventBody, EventBus } from './events.ts';
import type { SentPrefix } from './fork-context.ts';
import type { RuntimeLimits } from './limits.ts';
import type { ResultMemory } from './result-memory.ts';
import type { RunInbox } from './run-inbox.ts';
import type { Semaphore } from './semaphore.ts';
import type { EventNumbering, TreeRecord } from './tree-record.ts';
import { addUsage, type Usage } from './usage.ts';
import type { Vault } from './vault.ts';

/** State shared by every run of one tree: its events, its token budget, who it works for. */
export interface TreeState {
  bus: EventBus;
  limits: RuntimeLimits;
  /** Tokens spent by every run of the tree so far (the record's ledger, else one in memory). */
  ledger: BudgetLedger;
  /** The tree's runs still going, by id: where an in-process child runner finds a request's parent. */
  frames: Map<string, RunFrame>;
  /** Sub-agent runs of the tree running in the background here now (bounded by `maxBackground`). */
  background: { running: number };
  /** How deep delegation may nest in this tree: the root run's limit, which no sub-agent can raise. */
  maxDepth: number;
  userId: string;
  sessionId: string | undefined;
  /** Where finished sub-agent results are kept for reuse within a session, and for how long by default. */
  reuse?: { memory: ResultMemory; ttlMs: number; recall?: false } | undefined;
  /** The root run's id, known once the root run has started. */
  rootRunId: string;
  now: () => number;
  newId: () => string;
  /** Which calls need a person's approval and who gives it; without it such calls are denied. */
  approvals?: ApprovalSettings;
  /** The tree's durable side: its journal, where earlier attempts' runs go on, who runs it here. */
  record: TreeRecord;
}

/**
 * What a run needs of its parent: who it is and where it sits. In process the parent's whole frame; for a
 * child run by another process (a worker), these fields carried with the child's request.
 */
export interface ParentRun {
  id: string;
  parent: ParentRun | undefined;
  depth: number;
  /**
   * The deepest its sub-agents' runs may sit: the tree's limit, narrowed by its own definition's
   * `maxDepth` (counted from its own depth) and by every ancestor's. Absent for a parent in another
   * process, whose bound the tree's `maxDepth` there already is.
   */
  maxDepth?: number;
  definition: Pick<AgentDefinition, 'name'>;
  modelRef: string;
  journalKey: string;
  /** The task it was given (cut to a few hundred characters for a parent in another process). */
  task?: string;
}

/** One run's live state: identity, signals, counters, and what its children need from it. */
export interface RunFrame extends ParentRun {
  parent: ParentRun | undefined;
  definition: AgentDefinition;
  limits: RuntimeLimits;
  tree: TreeState;
  inputs: Record<string, unknown>;
  signal: AbortSignal;
  /** Fires only for this run's own wall-clock limit, so a timeout can be told from a cancellation. */
  timeoutSignal: AbortSignal;
  /**
   * When the run must end (ms since the epoch): its time limit from when it first started (an earlier
   * attempt's start, for a retried or resumed job), or its parent's deadline when that comes first.
   */
  deadline: number;
  vault: Vault;
  usage: Usage;
  /** Subtree usage of finished children, summed. */
  childUsage: Usage;
  children: Set<Promise<ResultEnvelope>>;
  siblings: Semaphore;
  /** Same agent + same input from this parent: the first delegation's promise. */
  delegations: Map<string, Promise<ResultEnvelope>>;
  /** Set once a tool of this run returned untrusted external content (or a child's result derived from it). */
  readUntrusted: boolean;
  /** Tool calls refused before parsing (too large, too deep, too many), by id, with the reason. */
  refusedCalls: Map<string, string>;
  /** Delegations started in the current model step (reset before each step). */
  stepDelegations: number;
  /** Settles when the current step's model call has reported its usage (or ended without). */
  stepUsageKnown: Promise<void>;
  /** Set when the model call that just ended reported no usage and it was estimated; read at its step's end. */
  lastCallEstimated: boolean;
  /** Where this run sits in the tree, for its journal entries: `r`, then `r/<toolCallId>`… */
  journalKey: string;
  /** When the latest model call started and its answer ended; read (and cleared) at its step's end. */
  lastCall: { startedAt: number; endedAt?: number } | undefined;
  /**
   * The usage of the latest model call once it has answered, until its step ends (the step also waits for
   * its tools): a stop while the tools run still counts the call (see streamTurns).
   */
  unfinishedStep: Usage | undefined;
  /** What this run has said and heard so far, for children whose context policy lets some through. */
  conversation: () => ModelMessage[];
  /** The instructions and tools its requests carry, once bound: what a forked child's requests begin with. */
  sent?: SentPrefix;
  /** URLs returned by this run's own tool calls, for verifying the sources its answer cites. */
  seenUrls: Set<string>;
  /** Names of the direct (non-agent) tools this run may call. */
  directTools: Set<string>;
  /** Numbers its events (repeating the stored numbers of what it replays from an earlier attempt). */
  numbering: EventNumbering;
  /** Stops this run and its subtree alone (a person's stop of one run): its parent goes on. */
  stopAlone: (reason: string) => void;
  /** The tool calls it completed, kept for its envelope should a person stop it. */
  completedCalls: CompletedCall[];
  /** A person's messages on their way to the run's next model step. */
  inbox: RunInbox;
  /** Its sub-agent runs that finished here, by id, with their conversations: what `continue_agent` reaches. */
  finishedChildren: Map<string, { agent: string; conversation: ModelMessage[] }>;
  /** The finished run this one continues from its own conversation (`continue_agent`, a follow-up). */
  continues?: string;
  /**
   * Its sub-agent runs started in the background whose envelope has not yet joined its conversation, by
   * the id of the message that delivers it; each settles when the run has ended and its message waits.
   */
  background: Map<string, Promise<ResultEnvelope>>;
  /** Stops its background runs still going (with a `ParentEnded` reason) when it can take no more turns. */
  backgroundStop: AbortController;
}

/**
 * The run goes beyond what its journal holds (a model request or a tool call made anew): a step boundary
 * for the record, and a retried run's next events are numbered after everything its earlier attempt
 * stored, so none of them is taken for a repeat of an event that attempt wrote before it died.
 */
export function goLive(frame: RunFrame): void {
  frame.tree.record.atBoundary?.();
  if (!frame.numbering.goLive()) return;
  const { worker } = frame.tree.record;
  emit(frame, { type: 'run-resume', ...(worker ? { worker } : {}) });
}

/** Stamps an event body with the run's identity and the next sequence number, and publishes it. */
export function emit(frame: RunFrame, body: EventBody): void {
  // Handed to another process: what this one would still say (its calls cut short, a `cancelled` end) is
  // not what happened to the run, which goes on there.
  if (frame.signal.reason instanceof RunHandedOff) return;
  const event = {
    ...body,
    runId: frame.id,
    parentRunId: frame.parent?.id ?? null,
    rootRunId: frame.tree.rootRunId,
    depth: frame.depth,
    agent: frame.definition.name,
    seq: frame.numbering.next(body),
    time: frame.tree.now(),
  } as CadreEvent;
  frame.tree.bus.publish(event);
}

/** A call refused before it ran: its `tool-call` (marked refused) and failed `tool-result`, written once. */
export function emitRefusedCall(
  frame: RunFrame,
  call: { toolCallId: string; name: string; input: unknown },
  reason: string,
): void {
  emit(frame, { type: 'tool-call', ...call, refused: reason });
  emit(frame, {
    type: 'tool-result',
    toolCallId: call.toolCallId,
    name: call.name,
    ok: false,
    error: reason,
    ms: 0,
  });
}

/** A run's task as its descendants carry it (who asks an approval, and for what): its first 300 characters. */
export function taskLine(task: string): string {
  const line = task.replace(/\s+/g, ' ').trim();
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
}

/**
 * What a child's envelope brings its parent (a delegation's, or a continued run's): its subtree's usage,
 * and, when it read untrusted content, that the parent now answers from it too. Returns the envelope.
 */
export function childReturned(parent: RunFrame, envelope: ResultEnvelope): ResultEnvelope {
  parent.childUsage = addUsage(parent.childUsage, envelope.subtreeUsage);
  if (envelope.untrusted) parent.readUntrusted = true;
  return envelope;
}

export function subtreeUsage(frame: RunFrame): Usage {
  return addUsage(frame.usage, frame.childUsage);
}

/** True when the run or its tree has spent its token budget; no new model call may start. */
export function budgetSpent(frame: RunFrame): boolean {
  const { runBudget, treeBudget } = frame.limits;
  if (runBudget !== undefined && frame.usage.totalTokens >= runBudget) return true;
  return treeBudget !== undefined && frame.tree.ledger.spent() >= treeBudget;
}

/** Adds one model call's usage to the run and to its tree. */
export function countUsage(frame: RunFrame, usage: Usage): void {
  frame.usage = addUsage(frame.usage, usage);
  frame.tree.ledger.charge(usage.totalTokens);
}
