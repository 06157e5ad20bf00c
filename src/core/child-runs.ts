import type { ModelMessage } from 'ai';
import type { ResultEnvelope } from './envelope.ts';
import type { ForkedPrefix } from './fork-context.ts';

/**
 * The seam a child run starts through. Everything a child needs to start is plain data (the request
 * below), so a runner may run it here or hand it to another process (a job queue) that has the same agent
 * definitions; the parent only ever sees the envelope. What the tree shares (its token budget and its
 * cancellation) sits behind the two small interfaces after it. Today's implementations are in process.
 */

/** A child run as data: serialisable with JSON, nothing live in it. */
export interface ChildRunRequest {
  /** The agent definition's name; the runner resolves it. */
  agent: string;
  task: string;
  /** The agent's declared inputs besides its task. */
  inputs: Record<string, unknown>;
  /** The parent's conversation, already cut to what the child's context policy lets through. */
  context: ModelMessage[];
  /** `context: fork`: the rest of the parent's request prefix (instructions, tool declarations). */
  fork?: ForkedPrefix;
  rootRunId: string;
  parentRunId: string;
  /** The parent's tool call this run answers. */
  parentToolCallId?: string;
  /** The child's depth in the tree (the root is 0). */
  depth: number;
  /** How deep the tree may nest (its root run's limit). */
  maxDepth: number;
  userId: string;
  sessionId?: string;
  /** The runs from the root down to the parent, with where each sits in the journal and its model. */
  ancestors: Array<{ runId: string; agent: string; journalKey: string; modelRef: string; task?: string }>;
  /** Sub-agents run anew (a question sent again): no kept result is handed back. */
  freshResults?: boolean;
  /** When the parent must end (ms since the epoch): a child run away from it stops then too. */
  deadline?: number;
  /** The finished run this one continues (`continue_agent`): `context` is then that run's conversation. */
  continues?: string;
  /** The run's id when its parent decided it (a background run; see `ChildRunner.runIdFor`). */
  runId?: string;
  /** Runs in the background: its parent went on when it started, and gets its envelope as a message. */
  background?: true;
}

/** Runs a child and resolves to its envelope; never rejects for what happens inside the run. */
export interface ChildRunner {
  run(request: ChildRunRequest, cancellation: Cancellation): Promise<ResultEnvelope>;
  /**
   * The id the child that `parentRunId`'s tool call `toolCallId` starts will have, when this runner decides
   * it (a queue derives it, so a retried parent reaches the same run); else the parent picks one and
   * passes it as the request's `runId`.
   */
  runIdFor?(parentRunId: string, toolCallId: string): string;
}

/**
 * The tokens a whole tree has spent, shared by every run in it (the tree budget's ledger). `spent` answers
 * at once with what this process knows; a ledger shared by processes adds the others' charges as it
 * learns them.
 */
export interface BudgetLedger {
  spent(): number;
  charge(tokens: number): void;
}

/** A tree's ledger in this process's memory. */
export class InMemoryBudgetLedger implements BudgetLedger {
  #spent = 0;

  spent(): number {
    return this.#spent;
  }

  charge(tokens: number): void {
    this.#spent += tokens;
  }
}

/** How a run learns it has been stopped. In process it is an AbortSignal linked to the parent's. */
export interface Cancellation {
  readonly signal: AbortSignal;
}
