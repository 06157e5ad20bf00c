import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { ApprovalRequest } from '../core/index.ts';
import { cliApprover, describeRequest } from './approval-prompt.ts';

const request: ApprovalRequest = {
  approvalId: 'apr_1',
  runId: 'run_1',
  toolCallId: 'call_1',
  tool: 'bash',
  input: { command: 'npm run migrate' },
  path: [{ runId: 'run_1', agent: 'main' }],
  userId: 'local',
  sessionId: undefined,
  expiresAt: 0,
};
const warning = 'This call was started before the run was interrupted; it may have run already.';

function stderr() {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk) => {
    text += chunk;
  });
  return { stream, text: () => text };
}

describe('the approval prompt', () => {
  it('says what a call may already have done before asking whether to run it again', async () => {
    expect(describeRequest(request)).toBe('⚠ main wants to call bash: $ npm run migrate');
    expect(describeRequest({ ...request, warning })).toBe(
      `⚠ main wants to call bash: $ npm run migrate\n  ${warning}`,
    );

    const tty = Object.assign(new PassThrough(), { isTTY: true });
    const out = stderr();
    const asking = cliApprover({ mode: undefined, stdin: tty, stderr: out.stream }).decide(
      { ...request, warning },
      new AbortController().signal,
    );
    tty.write('y\n');
    expect(await asking).toEqual({ approved: true, by: 'person' });
    expect(out.text()).toContain(
      `$ npm run migrate\n  ${warning}\nAllow it? [y/N, c = allow bash in this chat]`,
    );
  });

  it('says it too when a flag decides, and only then', async () => {
    const out = stderr();
    const approver = cliApprover({ mode: 'approve-all', stdin: new PassThrough(), stderr: out.stream });
    await approver.decide(request, new AbortController().signal);
    expect(out.text()).toBe('');
    expect(await approver.decide({ ...request, warning }, new AbortController().signal)).toEqual({
      approved: true,
      by: 'flag',
    });
    expect(out.text()).toBe(
      `\n⚠ main wants to call bash: $ npm run migrate\n  ${warning}\nAllowed by --approve-all.\n`,
    );
  });

  it('says which sub-agent asks, under whom and for what, and allows a tool for that sub-agent or the chat', async () => {
    const fromResearch: ApprovalRequest = {
      ...request,
      approvalId: 'apr_2',
      runId: 'run_r',
      path: [
        { runId: 'run_1', agent: 'main', task: 'Plan the trip' },
        { runId: 'run_r', agent: 'research', task: 'Find train times to Lyon' },
      ],
    };
    expect(describeRequest(fromResearch)).toBe(
      '⚠ main › research wants to call bash: $ npm run migrate\n  its task: Find train times to Lyon',
    );
    const tty = Object.assign(new PassThrough(), { isTTY: true });
    const out = stderr();
    const approver = cliApprover({ mode: undefined, stdin: tty, stderr: out.stream });
    const first = approver.decide(fromResearch, new AbortController().signal);
    await new Promise((resolve) => setImmediate(resolve));
    expect(out.text()).toContain('[y/N, s = allow bash for this sub-agent, c = allow bash in this chat]');
    tty.write('s\n');
    expect(await first).toEqual({ approved: true, by: 'person' });
    // The same sub-agent again: allowed without a question, and said so.
    expect(
      await approver.decide({ ...fromResearch, approvalId: 'apr_3' }, new AbortController().signal),
    ).toEqual({ approved: true, by: 'person', reason: 'allowed for this sub-agent' });
    expect(out.text()).toContain('Allowed: you allowed bash for this sub-agent.');
    // Another sub-agent is asked; "c" allows the tool for the rest of the chat.
    const other = { ...fromResearch, approvalId: 'apr_4', runId: 'run_x' };
    const asked = approver.decide(other, new AbortController().signal);
    await new Promise((resolve) => setImmediate(resolve));
    tty.write('c\n');
    expect(await asked).toEqual({ approved: true, by: 'person' });
    expect(await approver.decide({ ...request, approvalId: 'apr_5' }, new AbortController().signal)).toEqual({
      approved: true,
      by: 'person',
      reason: 'allowed in this chat',
    });
  });
});
