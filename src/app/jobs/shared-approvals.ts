import type { ApprovalDecision, ApprovalRequest, Approver } from '../../core/approvals.ts';
import { UserError } from '../../core/errors.ts';
import type { ApprovalStore, JobSignals, SharedSecrets } from '../../store/job-queue.ts';

/** What approvals in the database need of the job engine. */
type ApprovalParts = ApprovalStore & JobSignals & SharedSecrets;

import { type ApprovalDesk, ApprovalSigner, type SignedDecision } from '../approvals.ts';
import { Wakeup } from '../follow-events.ts';

/** How often a waiting request looks for its decision when no signal came (a missed NOTIFY). */
const LOOK_EVERY_MS = 2_000;

/**
 * Approvals when runs are jobs: a request asked by a run on any worker waits in the database, any process
 * lists it for its user and answers it (the web app of another server, the terminal that asked), and
 * the decision is signed with a secret the database holds for every process, so the worker verifies it
 * as the embedded mode verifies its own.
 */
export class SharedApprovals implements ApprovalDesk {
  #jobs: () => Promise<ApprovalParts>;
  #signer: Promise<ApprovalSigner> | undefined;

  constructor(jobs: () => Promise<ApprovalParts>) {
    this.#jobs = jobs;
  }

  #sign(): Promise<ApprovalSigner> {
    this.#signer ??= this.#jobs().then(
      async (jobs) => new ApprovalSigner(await jobs.sharedSecret('approval-key')),
    );
    return this.#signer;
  }

  /** Stored before the run announces it: any server can take its answer from the moment it is seen. */
  async register(request: ApprovalRequest): Promise<void> {
    await (await this.#jobs()).putApproval({
      approvalId: request.approvalId,
      userId: request.userId,
      request: JSON.stringify(request),
    });
  }

  async decide(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalDecision> {
    const jobs = await this.#jobs();
    const signer = await this.#sign();
    // Again, in case `register` could not (storing it twice is one row).
    await this.register(request);
    // Woken when a decision is announced (kept if it comes while the table is read), or when the wait ends.
    const wakeUp = new Wakeup();
    const unlisten = await jobs.listen('decided', (payload) => {
      if (payload === request.approvalId || payload === '*') wakeUp.wake();
    });
    const onAbort = () => wakeUp.wake();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      while (!signal.aborted) {
        const stored = await jobs.takeDecision(request.approvalId);
        if (stored !== undefined) {
          const decision = JSON.parse(stored) as SignedDecision;
          if (!signer.verify(request, decision))
            return { approved: false, by: 'forged', reason: 'the decision was not signed by this Cadre' };
          return {
            approved: decision.approved,
            by: decision.by,
            ...(decision.reason ? { reason: decision.reason } : {}),
          };
        }
        await wakeUp.wait(LOOK_EVERY_MS);
      }
      // The run ended or the wait timed out: nobody should be offered this request any more.
      await jobs.dropApproval(request.approvalId).catch(() => {});
      return new Promise<never>(() => {});
    } finally {
      signal.removeEventListener('abort', onAbort);
      unlisten();
    }
  }

  async list(userId: string): Promise<ApprovalRequest[]> {
    const jobs = await this.#jobs();
    return (await jobs.pendingApprovals(userId)).map(
      (stored) => JSON.parse(stored.request) as ApprovalRequest,
    );
  }

  async answer(
    userId: string,
    approvalId: string,
    answer: { approved: boolean; reason?: string | undefined; by?: string },
  ): Promise<SignedDecision> {
    const jobs = await this.#jobs();
    const pending = (await jobs.pendingApprovals(userId)).find((stored) => stored.approvalId === approvalId);
    if (!pending)
      throw new UserError('not_found', `There is no pending approval "${approvalId}".`, { approvalId });
    const decision = (await this.#sign()).sign(
      JSON.parse(pending.request) as ApprovalRequest,
      decisionOf(answer),
    );
    if (!(await jobs.decideApproval(userId, approvalId, JSON.stringify(decision))))
      throw new UserError('not_found', `There is no pending approval "${approvalId}".`, { approvalId });
    return decision;
  }

  /**
   * Asks `approver` (a terminal's prompt or flags) about a request seen in a tree's events and records its
   * decision for the worker that waits on it.
   */
  async relay(approver: Approver, request: ApprovalRequest, signal: AbortSignal): Promise<void> {
    const decided = await approver.decide(request, signal);
    if (signal.aborted) return;
    const jobs = await this.#jobs();
    const decision = (await this.#sign()).sign(request, decided);
    await jobs.decideSeenApproval(
      { approvalId: request.approvalId, userId: request.userId, request: JSON.stringify(request) },
      JSON.stringify(decision),
    );
  }
}

function decisionOf(answer: {
  approved: boolean;
  reason?: string | undefined;
  by?: string;
}): ApprovalDecision {
  return {
    approved: answer.approved,
    by: answer.by ?? 'person',
    ...(answer.reason ? { reason: answer.reason } : {}),
  };
}
