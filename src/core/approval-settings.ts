import { type ApprovalRules, NO_RULES } from './approval-rules.ts';

/**
 * What a tree's approvals are made of: the requests, decisions and deciders, apart from the gate that
 * uses them (approvals.ts), so a run's frame can name its settings without importing the gate.
 */

/** One call waiting for a person: what the `approval-request` event and every approver see. */
export interface ApprovalRequest {
  approvalId: string;
  runId: string;
  toolCallId: string;
  tool: string;
  input: unknown;
  /**
   * The runs from the root down to the one asking, agent names and ids, each with its task (a line): who
   * asks, its chain of parents, and what it was asked to do.
   */
  path: Array<{ runId: string; agent: string; task?: string }>;
  userId: string;
  sessionId: string | undefined;
  /** Milliseconds since the epoch after which the wait ends as denied. */
  expiresAt: number;
  /**
   * Said before the person decides, when this call may already have run: an interrupted attempt started
   * it (see interrupted-calls.ts). Such a call is asked even where a rule would allow it.
   */
  warning?: string;
}

export interface ApprovalDecision {
  approved: boolean;
  reason?: string;
  /** Who decided: `person` (a prompt, the API, the web app), `flag` (--approve-all/--deny-all), `timeout`, ... */
  by: string;
}

/**
 * Where decisions come from (the CLI's prompt or flags, the server's pending list). It may take as long
 * as it likes: the gate ends the wait at the request's `expiresAt` as denied, and when the run ends.
 */
export interface Approver {
  /**
   * Makes the request answerable before anyone is told of it (an approver in another process stores it
   * first), so a person who answers the moment the `approval-request` reaches them is never told there is
   * no such approval. Optional: an approver that answers in `decide` alone needs none.
   */
  register?(request: ApprovalRequest): Promise<void>;
  decide(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalDecision>;
}

/** A tree's approval settings: the rules, who decides, and how long a call may wait. */
export interface ApprovalSettings {
  rules: ApprovalRules;
  approver: Approver | undefined;
  timeoutMs: number;
}

export const DEFAULT_APPROVAL_TIMEOUT_MS = 5 * 60_000;

/** Nobody to ask: calls that need approval are denied, saying so. */
export const NO_APPROVALS: ApprovalSettings = {
  rules: NO_RULES,
  approver: undefined,
  timeoutMs: DEFAULT_APPROVAL_TIMEOUT_MS,
};
