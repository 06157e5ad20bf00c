import { randomBytes } from 'node:crypto';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ApprovalRequest } from '../core/approvals.ts';
import { ApprovalSigner, PendingApprovals } from './approvals.ts';

const request = (overrides: Partial<ApprovalRequest> = {}): ApprovalRequest => ({
  approvalId: 'apr_1',
  runId: 'run_child',
  toolCallId: 'call_1',
  tool: 'bash',
  input: { command: 'npm test' },
  path: [
    { runId: 'run_root', agent: 'main' },
    { runId: 'run_child', agent: 'coder' },
  ],
  userId: 'alice',
  sessionId: undefined,
  expiresAt: Date.now() + 60_000,
  ...overrides,
});

describe('pending approvals', () => {
  it('a pending request is answered by its own user, once', async () => {
    const pending = new PendingApprovals(new ApprovalSigner(randomBytes(32)));
    const waiting = pending.decide(request(), new AbortController().signal);
    expect(pending.list('alice').map((item) => item.approvalId)).toEqual(['apr_1']);
    expect(pending.list('bob')).toEqual([]);
    expect(() => pending.answer('bob', 'apr_1', { approved: true })).toThrow(/no pending approval/);
    const signed = pending.answer('alice', 'apr_1', { approved: true, reason: 'looks fine' });
    expect(signed.signature).toMatch(/^[0-9a-f]{64}$/);
    await expect(waiting).resolves.toEqual({ approved: true, by: 'person', reason: 'looks fine' });
    expect(() => pending.answer('alice', 'apr_1', { approved: false })).toThrow(/no pending approval/);
  });

  it('a decision not signed by this install, or signed for another call or verdict, is refused', async () => {
    const mine = new ApprovalSigner(randomBytes(32));
    const theirs = new ApprovalSigner(randomBytes(32));
    const pending = new PendingApprovals(mine);
    const forged = [
      theirs.sign(request(), { approved: true, by: 'person' }),
      { ...mine.sign(request(), { approved: false, by: 'person' }), approved: true },
      { ...mine.sign(request({ input: { command: 'ls' } }), { approved: true, by: 'person' }) },
      { approvalId: 'apr_1', approved: true, by: 'person', signature: '' },
    ];
    for (const decision of forged) {
      const waiting = pending.decide(request(), new AbortController().signal);
      expect(pending.settle(decision)).toBe(true);
      await expect(waiting).resolves.toMatchObject({ approved: false, by: 'forged' });
    }
    const waiting = pending.decide(request(), new AbortController().signal);
    pending.settle(mine.sign(request(), { approved: true, by: 'person' }));
    await expect(waiting).resolves.toMatchObject({ approved: true });
  });

  it('forgets a request when its run ends', () => {
    const pending = new PendingApprovals(new ApprovalSigner(randomBytes(32)));
    const controller = new AbortController();
    void pending.decide(request(), controller.signal);
    controller.abort();
    expect(pending.list('alice')).toEqual([]);
  });

  it('keeps the install secret in a file only its owner can read, the same across opens', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'cadre-key-')), 'approval.key');
    const first = ApprovalSigner.forFile(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const signed = first.sign(request(), { approved: true, by: 'person' });
    expect(ApprovalSigner.forFile(file).verify(request(), signed)).toBe(true);
  });
});
