import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ApprovalDecision, ApprovalRequest, Approver } from '../core/approvals.ts';
import { UserError } from '../core/errors.ts';

/** A decision as stored and sent between processes: it names what it decides and carries a signature. */
export interface SignedDecision extends ApprovalDecision {
  approvalId: string;
  signature: string;
}

/**
 * Signs approval decisions with a per-install secret ($CADRE_HOME/approval.key, created once, readable
 * only by its owner). A decision binds the approval id, the tool, a digest of the exact input and the
 * verdict, so a client cannot make one up, replay one for another call, or turn a denial into an approval
 * (AI SDK's `experimental_toolApprovalSecret` does the same for approvals replayed from a chat history).
 */
export class ApprovalSigner {
  readonly #secret: Buffer;

  constructor(secret: Buffer) {
    this.#secret = secret;
  }

  /** The install's signer, creating its secret on first use. */
  static forFile(file: string): ApprovalSigner {
    if (!existsSync(file)) {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
    }
    chmodSync(file, 0o600);
    return new ApprovalSigner(Buffer.from(readFileSync(file, 'utf8').trim(), 'hex'));
  }

  sign(
    request: Pick<ApprovalRequest, 'approvalId' | 'tool' | 'input'>,
    decision: ApprovalDecision,
  ): SignedDecision {
    return {
      ...decision,
      approvalId: request.approvalId,
      signature: this.#mac(request, decision.approved),
    };
  }

  /** True when the decision was signed here for exactly this request. */
  verify(request: Pick<ApprovalRequest, 'approvalId' | 'tool' | 'input'>, decision: SignedDecision): boolean {
    if (decision.approvalId !== request.approvalId || typeof decision.signature !== 'string') return false;
    const expected = Buffer.from(this.#mac(request, decision.approved), 'hex');
    const given = Buffer.from(decision.signature, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  #mac(request: Pick<ApprovalRequest, 'approvalId' | 'tool' | 'input'>, approved: boolean): string {
    const inputDigest = createHash('sha256')
      .update(JSON.stringify(request.input ?? null))
      .digest('hex');
    return createHmac('sha256', this.#secret)
      .update(`${request.approvalId}\n${request.tool}\n${inputDigest}\n${approved ? 'approved' : 'denied'}`)
      .digest('hex');
  }
}

/**
 * Where approvals wait for a person and are answered: the runtime's approver, listed and answered per
 * user. In process (PendingApprovals) or in the database when runs are jobs (jobs/shared-approvals.ts).
 */
export interface ApprovalDesk extends Approver {
  list(userId: string): ApprovalRequest[] | Promise<ApprovalRequest[]>;
  answer(
    userId: string,
    approvalId: string,
    answer: { approved: boolean; reason?: string | undefined; by?: string },
  ): SignedDecision | Promise<SignedDecision>;
}

interface Pending {
  request: ApprovalRequest;
  settle: (decision: SignedDecision) => void;
}

/**
 * Approvals waiting for a person, answered from anywhere (the API, the web app, a CLI prompt). The
 * runtime's approver: each request waits here until `answer` is called for it, by the user it belongs
 * to, and only a decision whose signature verifies lets the call run.
 */
export class PendingApprovals implements ApprovalDesk {
  readonly #signer: ApprovalSigner;
  readonly #pending = new Map<string, Pending>();

  constructor(signer: ApprovalSigner) {
    this.#signer = signer;
  }

  decide(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalDecision> {
    return new Promise((resolve) => {
      const done = () => this.#pending.delete(request.approvalId);
      signal.addEventListener('abort', done, { once: true });
      this.#pending.set(request.approvalId, {
        request,
        settle: (decision) => {
          done();
          signal.removeEventListener('abort', done);
          if (this.#signer.verify(request, decision)) {
            resolve({
              approved: decision.approved,
              by: decision.by,
              ...(decision.reason ? { reason: decision.reason } : {}),
            });
          } else {
            resolve({ approved: false, by: 'forged', reason: 'the decision was not signed by this Cadre' });
          }
        },
      });
    });
  }

  /** Requests waiting for `userId`, oldest first. */
  list(userId: string): ApprovalRequest[] {
    return [...this.#pending.values()]
      .map((pending) => pending.request)
      .filter((request) => request.userId === userId);
  }

  /** The person's answer to one pending request; refuses ids that are not pending for this user. */
  answer(
    userId: string,
    approvalId: string,
    answer: { approved: boolean; reason?: string | undefined; by?: string },
  ): SignedDecision {
    const pending = this.#pending.get(approvalId);
    if (!pending || pending.request.userId !== userId) {
      throw new UserError('not_found', `There is no pending approval "${approvalId}".`, { approvalId });
    }
    const decision = this.#signer.sign(pending.request, {
      approved: answer.approved,
      by: answer.by ?? 'person',
      ...(answer.reason ? { reason: answer.reason } : {}),
    });
    pending.settle(decision);
    return decision;
  }

  /** Hands a decision that arrived from elsewhere (another process, the journal) to a waiting request. */
  settle(decision: SignedDecision): boolean {
    const pending = this.#pending.get(decision.approvalId);
    if (!pending) return false;
    pending.settle(decision);
    return true;
  }
}
