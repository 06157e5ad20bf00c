import { approvalRuleFor } from './approval-rules.ts';
import {
  type ApprovalDecision,
  type ApprovalRequest,
  type ApprovalSettings,
  NO_APPROVALS,
} from './approval-settings.ts';
import { callRunKey, type InterruptedStart } from './interrupted-calls.ts';
import { emit, type ParentRun, type RunFrame, taskLine } from './run-frame.ts';
import type { CadreTool } from './tool.ts';

export {
  type ApprovalDecision,
  type ApprovalRequest,
  type ApprovalSettings,
  type Approver,
  DEFAULT_APPROVAL_TIMEOUT_MS,
  NO_APPROVALS,
} from './approval-settings.ts';

/** A call a rule or a person refused; the model sees its message as the tool's error. */
export class ToolCallDeniedError extends Error {
  override name = 'ToolCallDeniedError';
}

let approvalCounter = 0;

/**
 * Lets a tool call through, or waits for a person, or refuses it. Asking emits `approval-request` on the
 * run, waits (only this run waits; the rest of the tree goes on), then emits `approval-result`. A denial
 * throws `ToolCallDeniedError`, which becomes the call's error result. A call an interrupted attempt had
 * started (`rerun`) is asked again, with its warning, even where a rule allows it: what was allowed is one
 * run, and this would be another.
 */
export async function gateToolCall(
  frame: RunFrame,
  call: { toolCallId: string; name: string; input: unknown },
  tool: Pick<CadreTool, 'needsApproval' | 'approvalSubject'> | undefined,
  rerun?: InterruptedStart,
): Promise<void> {
  const settings = frame.tree.approvals ?? NO_APPROVALS;
  const resolved = tool?.approvalSubject
    ? await tool.approvalSubject(call.input, { userId: frame.tree.userId }).catch(() => null)
    : undefined;
  const decision = approvalRuleFor(settings.rules, {
    tool: call.name,
    input: call.input,
    toolAsks: tool?.needsApproval === true,
    agentAsks: frame.definition.approval.includes(call.name),
    ...(resolved !== undefined ? { resolved } : {}),
  });
  if (decision.rule === 'allow' && !rerun) return;
  if (decision.rule === 'deny') {
    throw new ToolCallDeniedError(`${call.name} was refused by the approval rules (${decision.because})`);
  }
  // A call that was already waiting when its process died waits again under the same id and deadline.
  const journal = frame.tree.record.journal;
  const approvalKey = callRunKey(call.toolCallId, rerun?.run ?? 1);
  const earlier = journal?.get(frame.journalKey, 'approval', approvalKey) as
    | { approvalId: string; expiresAt: number }
    | undefined;
  const request: ApprovalRequest = {
    approvalId:
      earlier?.approvalId ??
      `apr_${frame.tree.now().toString(36)}${(++approvalCounter).toString(36)}${Math.random().toString(36).slice(2, 8)}`,
    runId: frame.id,
    toolCallId: call.toolCallId,
    tool: call.name,
    input: call.input,
    path: runPath(frame),
    userId: frame.tree.userId,
    sessionId: frame.tree.sessionId,
    expiresAt: earlier?.expiresAt ?? frame.tree.now() + settings.timeoutMs,
    ...(rerun ? { warning: rerun.warning } : {}),
  };
  if (journal && !earlier) {
    await journal.put(frame.journalKey, 'approval', approvalKey, {
      approvalId: request.approvalId,
      expiresAt: request.expiresAt,
    });
  }
  // Answerable first, then announced (a failure here is left to `decide`, which stores it too).
  await settings.approver?.register?.(request).catch(() => {});
  emit(frame, {
    type: 'approval-request',
    approvalId: request.approvalId,
    toolCallId: call.toolCallId,
    name: call.name,
    input: call.input,
    path: request.path,
    expiresAt: request.expiresAt,
    ...(rerun ? { warning: rerun.warning } : {}),
  });
  const answer = await waitForDecision(settings, request, frame.signal, request.expiresAt - frame.tree.now());
  emit(frame, {
    type: 'approval-result',
    approvalId: request.approvalId,
    toolCallId: call.toolCallId,
    name: call.name,
    approved: answer.approved,
    by: answer.by,
    ...(answer.reason ? { reason: answer.reason } : {}),
  });
  if (!answer.approved) {
    throw new ToolCallDeniedError(
      `the person did not approve this ${call.name} call${answer.reason ? `: ${answer.reason}` : ''}`,
    );
  }
}

async function waitForDecision(
  settings: ApprovalSettings,
  request: ApprovalRequest,
  runSignal: AbortSignal,
  remainingMs: number,
): Promise<ApprovalDecision> {
  if (!settings.approver) {
    return { approved: false, by: 'none', reason: 'nobody can be asked for approval here' };
  }
  const waiting = new AbortController();
  const signal = AbortSignal.any([runSignal, waiting.signal]);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<ApprovalDecision>((resolve) => {
    timer = setTimeout(
      () =>
        resolve({
          approved: false,
          by: 'timeout',
          reason: `no decision within ${Math.round(settings.timeoutMs / 1000)} s`,
        }),
      Math.max(0, remainingMs),
    );
  });
  const cancelled = new Promise<ApprovalDecision>((resolve) => {
    const onAbort = () => resolve({ approved: false, by: 'cancelled', reason: 'the run was cancelled' });
    if (runSignal.aborted) onAbort();
    else runSignal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([settings.approver.decide(request, signal), timedOut, cancelled]);
  } catch (error) {
    return {
      approved: false,
      by: 'error',
      reason: `the approval could not be asked: ${error instanceof Error ? error.message : String(error)}`,
    };
  } finally {
    clearTimeout(timer);
    waiting.abort();
  }
}

/** The runs from the root down to `frame`, each with its task (a line): who asks, under whom, for what. */
function runPath(frame: RunFrame): ApprovalRequest['path'] {
  const path: ApprovalRequest['path'] = [];
  for (let at: ParentRun | undefined = frame; at; at = at.parent) {
    path.unshift({
      runId: at.id,
      agent: at.definition.name,
      ...(at.task !== undefined ? { task: taskLine(at.task) } : {}),
    });
  }
  return path;
}
