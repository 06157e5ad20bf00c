import type { Source } from './envelope.ts';
import type { RunStatus } from './status.ts';
import type { Usage } from './usage.ts';

/**
 * The event protocol: what every run did, as append-only deltas. The CLI, the server, the store and the
 * web UI all read these same records. Names are noun-verb and stable.
 */
export interface EventBase {
  runId: string;
  parentRunId: string | null;
  /** The run at the root of this run's tree (its own id at the root). */
  rootRunId: string;
  depth: number;
  agent: string;
  /** Per run, from 0. */
  seq: number;
  /** Milliseconds since the epoch. */
  time: number;
}

export interface RunStartEvent extends EventBase {
  type: 'run-start';
  task: string;
  model: string;
  /** The user the run acts for: scopes its documents, and who may read it back. */
  userId: string;
  sessionId?: string;
  /** The parent's tool call that started this run (absent at the root), so a view can nest it there. */
  parentToolCallId?: string;
  /** The worker process that executes the run, when runs are jobs (the PostgreSQL mode's `cadre worker`). */
  worker?: string;
  /** The finished run this one continues from its own conversation (`continue_agent`). */
  continues?: string;
  /** Started with its parent's whole conversation and request prefix (`context: fork`). */
  forked?: true;
  /**
   * Runs in the background: its parent's tool call returned at once, and its envelope reaches the parent
   * later as a message (`run-message` with `background`).
   */
  background?: true;
}
export interface TextDeltaEvent extends EventBase {
  type: 'text-delta';
  delta: string;
}
export interface ReasoningDeltaEvent extends EventBase {
  type: 'reasoning-delta';
  delta: string;
}
export interface ToolCallEvent extends EventBase {
  type: 'tool-call';
  toolCallId: string;
  name: string;
  input: unknown;
  /** Set when the call was refused before execution (unknown tool, bad arguments, a limit). */
  refused?: string;
  /** Set when the call was answered with an earlier identical delegation's result. */
  deduplicated?: boolean;
  /**
   * Set when the call was answered with the result of an identical delegation from an earlier question of
   * the same session (within its reuse TTL): the run it came from, and when that run finished.
   */
  reused?: { runId: string; finishedAt: string };
  /** A delegation started in the background: its result says so at once, its run's envelope comes later. */
  background?: true;
}
export interface ToolResultEvent extends EventBase {
  type: 'tool-result';
  toolCallId: string;
  name: string;
  ok: boolean;
  output?: unknown;
  error?: string;
  ms: number;
}
/** One model call of a run finished; usage is that call's own. */
export interface StepFinishEvent extends EventBase {
  type: 'step-finish';
  step: number;
  finishReason: string;
  usage: Usage;
  /** When the model call of this step started and finished answering (ms since the epoch). */
  modelStartedAt?: number;
  modelEndedAt?: number;
}
export interface PlanStep {
  title: string;
  status: 'pending' | 'running' | 'done' | 'failed' | 'skipped';
  result?: string;
}
export interface PlanUpdateEvent extends EventBase {
  type: 'plan-update';
  steps: PlanStep[];
}
/** A tool call waits for a person's decision; only this run waits, the rest of the tree goes on. */
export interface ApprovalRequestEvent extends EventBase {
  type: 'approval-request';
  approvalId: string;
  toolCallId: string;
  name: string;
  input: unknown;
  /** The runs from the root to the one asking, each with its task (a line). */
  path: Array<{ runId: string; agent: string; task?: string }>;
  /** Milliseconds since the epoch when the wait ends as denied. */
  expiresAt: number;
  /** The call may have run already (an interrupted attempt started it): what the person should know. */
  warning?: string;
}
/** The decision on an approval request: who made it and why. A denied call fails with the reason. */
export interface ApprovalResultEvent extends EventBase {
  type: 'approval-result';
  approvalId: string;
  toolCallId: string;
  name: string;
  approved: boolean;
  /** `person`, `flag`, `timeout`, `cancelled`, `none` (nobody could be asked), ... */
  by: string;
  reason?: string;
}
export interface RunFinishEvent extends EventBase {
  type: 'run-finish';
  status: RunStatus;
  summary: string;
  data?: unknown;
  sources?: Source[];
  usage: Usage;
  subtreeUsage: Usage;
  /** The run's result is derived from untrusted external content (see core/untrusted.ts). */
  untrusted?: boolean;
  /** A person stopped this run alone (its parent went on with what it had). */
  stoppedBy?: 'person';
}
/**
 * A run continues in another process after the one running it stopped (its worker died; the queue handed
 * its job on): what follows is done anew there, after the steps it had committed.
 */
export interface RunResumeEvent extends EventBase {
  type: 'run-resume';
  /** The worker the run continues on. */
  worker?: string;
}
/**
 * A model call failed in a way a retry may fix (the provider busy, rate-limited, a connection reset) and is
 * tried again after `delayMs`: attempt `attempt` of at most `maxAttempts`. Nothing else of the run changes;
 * a view says so until the run's next event.
 */
export interface ModelRetryEvent extends EventBase {
  type: 'model-retry';
  /** The attempt about to be made (2 for the first retry). */
  attempt: number;
  maxAttempts: number;
  delayMs: number;
  /** What the provider said, in a sentence. */
  reason: string;
}
/**
 * A person's message joined the run's conversation, as a user message before its model step `step` (from
 * 0, the run's whole count): sent to the running run (`cadre runs say`, `POST /api/runs/:id/messages`,
 * the page's card).
 */
export interface RunMessageEvent extends EventBase {
  type: 'run-message';
  messageId: string;
  text: string;
  step: number;
  /** Not a person's message: the envelope of a sub-agent run that ran in the background, delivered. */
  background?: BackgroundDelivery;
}

/** Which background run a delivered message carries the envelope of. */
export interface BackgroundDelivery {
  runId: string;
  agent: string;
  status: RunStatus;
  /** The parent's tool call that started it. */
  toolCallId: string;
}
export interface RunErrorEvent extends EventBase {
  type: 'run-error';
  status: RunStatus;
  message: string;
}

export type CadreEvent =
  | RunStartEvent
  | TextDeltaEvent
  | ReasoningDeltaEvent
  | ToolCallEvent
  | ToolResultEvent
  | StepFinishEvent
  | PlanUpdateEvent
  | ApprovalRequestEvent
  | ApprovalResultEvent
  | RunFinishEvent
  | RunResumeEvent
  | ModelRetryEvent
  | RunMessageEvent
  | RunErrorEvent;

export type CadreEventType = CadreEvent['type'];

/** Distributes over the union so each event keeps its own fields. */
type WithoutBase<E> = E extends EventBase ? Omit<E, keyof EventBase> : never;
export type EventBody = WithoutBase<CadreEvent>;

export type EventListener = (event: CadreEvent) => void;

/** Fan-out of events to listeners; a listener that throws never breaks a run. */
export class EventBus {
  #listeners = new Set<EventListener>();

  subscribe(listener: EventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  publish(event: CadreEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // A broken listener (a closed terminal, a failed write) must not end the run it observes.
      }
    }
  }
}
