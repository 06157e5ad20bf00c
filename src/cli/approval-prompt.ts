import { createInterface } from 'node:readline/promises';
import type { ApprovalDecision, ApprovalRequest, Approver } from '../core/index.ts';
import { UserError } from '../core/index.ts';
import { printableLine } from './terminal-text.ts';

export type ApprovalMode = 'approve-all' | 'deny-all' | undefined;

export interface PromptOptions {
  mode: ApprovalMode;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
  /** Stops the live tree's redraws while a question is on screen; returns the function that resumes them. */
  pause?: () => () => void;
}

/** `--approve-all` / `--deny-all` as a mode; both at once is the person's mistake. */
export function approvalMode(approveAll: boolean | undefined, denyAll: boolean | undefined): ApprovalMode {
  if (approveAll && denyAll) {
    throw new UserError('usage', '--approve-all and --deny-all contradict each other; pass one of them');
  }
  return approveAll ? 'approve-all' : denyAll ? 'deny-all' : undefined;
}

/** The reason a call is denied when nobody at a terminal can be asked. */
export const NO_TERMINAL_REASON =
  'nobody could be asked: cadre is not reading from a terminal; run it on one, pass --approve-all or ' +
  '--deny-all, or allow the tool in the "approvals" section of config.json';

/**
 * The CLI's approver: `--approve-all` and `--deny-all` decide at once; on a terminal the person is asked,
 * one question at a time (sub-agents asking together wait their turn); with neither, calls are denied
 * with a reason the model and the person can read.
 */
export function cliApprover(options: PromptOptions): Approver {
  let queue: Promise<unknown> = Promise.resolve();
  const allowed: Allowed = { tools: new Set(), runs: new Set() };
  return {
    decide(request, signal): Promise<ApprovalDecision> {
      // A call that may have run already is said even when a flag decides it: the person reads what was done.
      if (options.mode && request.warning) {
        options.stderr.write(
          `\n${describeRequest(request)}\n${options.mode === 'approve-all' ? 'Allowed by --approve-all.' : 'Denied by --deny-all.'}\n`,
        );
      }
      if (options.mode === 'approve-all') return Promise.resolve({ approved: true, by: 'flag' });
      if (options.mode === 'deny-all') {
        return Promise.resolve({ approved: false, by: 'flag', reason: 'denied by --deny-all' });
      }
      if (!options.stdin.isTTY) {
        return Promise.resolve({ approved: false, by: 'none', reason: NO_TERMINAL_REASON });
      }
      const asked = queue.then(() => {
        // Allowed by the person's earlier answer, for this sub-agent or for the rest of this chat; a call
        // that may have run already is always asked.
        const by = request.warning ? undefined : allowedBy(allowed, request);
        if (by) {
          options.stderr.write(
            `\n${describeRequest(request)}\nAllowed: you allowed ${request.tool} ${by}.\n`,
          );
          return { approved: true, by: 'person', reason: `allowed ${by}` };
        }
        return ask(options, request, signal, allowed);
      });
      queue = asked.catch(() => undefined);
      return asked;
    },
  };
}

/** What the person allowed from here on: tools for the rest of this chat, `runId tool` for one sub-agent. */
interface Allowed {
  tools: Set<string>;
  runs: Set<string>;
}

function allowedBy(allowed: Allowed, request: ApprovalRequest): string | undefined {
  if (allowed.runs.has(`${request.runId} ${request.tool}`)) return 'for this sub-agent';
  if (allowed.tools.has(request.tool)) return 'in this chat';
  return undefined;
}

async function ask(
  options: PromptOptions,
  request: ApprovalRequest,
  signal: AbortSignal,
  allowed: Allowed,
): Promise<ApprovalDecision> {
  if (signal.aborted)
    return { approved: false, by: 'cancelled', reason: 'the run ended before it was asked' };
  const resume = options.pause?.();
  const lines = createInterface({ input: options.stdin, output: options.stderr, terminal: false });
  try {
    options.stderr.write(`\n${describeRequest(request)}\n`);
    const subAgent = request.path.length > 1;
    const answer = await lines.question(
      `Allow it? [y/N${subAgent ? `, s = allow ${request.tool} for this sub-agent` : ''}, c = allow ${request.tool} in this chat] (a reason after the letter is passed on) `,
      { signal },
    );
    const [word = '', ...rest] = answer.trim().split(/\s+/);
    if (subAgent && /^s$/i.test(word)) allowed.runs.add(`${request.runId} ${request.tool}`);
    if (/^c$/i.test(word)) allowed.tools.add(request.tool);
    const approved = /^(y|yes|c)$/i.test(word) || (subAgent && /^s$/i.test(word));
    const reason = rest.join(' ').trim();
    return {
      approved,
      by: 'person',
      ...(reason ? { reason } : approved ? {} : { reason: 'the person said no' }),
    };
  } catch {
    return { approved: false, by: 'cancelled', reason: 'the run ended while the person was being asked' };
  } finally {
    lines.close();
    resume?.();
  }
}

/**
 * Who asks (the agent, its chain of parents, its task), which tool, what exactly it would do, and what to
 * know first (it may have run).
 */
export function describeRequest(request: ApprovalRequest): string {
  const where = request.path.map((step) => step.agent).join(' › ');
  const task = request.path.at(-1)?.task;
  const input = request.input as Record<string, unknown> | null;
  const detail =
    typeof input?.command === 'string'
      ? `$ ${input.command}`
      : typeof input?.path === 'string'
        ? `${input.path}${typeof input.content === 'string' ? ` (${input.content.length} characters)` : ''}`
        : JSON.stringify(input);
  const asked = `⚠ ${where} wants to call ${request.tool}: ${printableLine(detail).slice(0, 400)}`;
  const forTask = task ? `\n  its task: ${printableLine(task).slice(0, 300)}` : '';
  return `${asked}${forTask}${request.warning ? `\n  ${printableLine(request.warning)}` : ''}`;
}
