import type { AskRequest, AskResult } from '../app/ask.ts';
import type { Cadre } from '../app/create-cadre.ts';
import type { CadreEvent } from '../core/index.ts';
import { type ApprovalMode, cliApprover } from './approval-prompt.ts';
import { latestLine, retryNotice } from './run-activity.ts';
import type { LiveTree } from './tree-view.ts';

export interface AskOptions {
  question: string;
  agent?: string;
  /** Follow up this finished sub-agent run instead (`cadre runs say` on a run that has ended). */
  continues?: string;
  model?: string;
  sessionId?: string;
  userId: string;
  inputs?: Record<string, unknown>;
  signal: AbortSignal;
  /** Where the live tree goes; nothing is drawn when it is not a terminal. */
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  /** Limits of the root run only (`--max-turns`, `--timeout`), and the tree's (`--budget`). */
  rootLimits?: AskRequest['rootLimits'];
  limits?: AskRequest['limits'];
  /** Every event of the tree as it happens (`cadre ask --events`). */
  onEvent?: AskRequest['onEvent'];
  /** How tool calls that need approval are decided: flags, or a question on the terminal `stdin` is. */
  approval?: { mode: ApprovalMode; stdin: NodeJS.ReadableStream & { isTTY?: boolean } };
}

/** Asks through the `ask` use case, drawing the live tree on a terminal meanwhile. */
export async function askOnce(cadre: Cadre, options: AskOptions): Promise<AskResult> {
  let live: LiveTree | undefined;
  const run = await cadre.ask({
    ...(options.approval
      ? {
          approver: cliApprover({
            ...options.approval,
            stderr: options.stderr,
            ...(options.stderr.isTTY ? { pause: () => live?.pause() ?? (() => {}) } : {}),
          }),
        }
      : {}),
    userId: options.userId,
    message: options.question,
    // A question on a queue no worker has taken from yet says so, rather than nothing.
    onQueued: () => options.stderr.write('cadre: queued: no worker has taken it yet\n'),
    signal: options.signal,
    ...(options.sessionId ? { sessionId: options.sessionId } : {}),
    ...(options.agent ? { agent: options.agent } : {}),
    ...(options.continues ? { continues: options.continues } : {}),
    ...(options.model ? { model: options.model } : {}),
    ...(options.inputs ? { inputs: options.inputs } : {}),
    ...(options.rootLimits ? { rootLimits: options.rootLimits } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
    onEvent: (event) => {
      const notice = backgroundNotice(event);
      if (notice) {
        // Said between the live tree's frames on a terminal.
        const resume = live?.pause() ?? (() => {});
        options.stderr.write(notice);
        resume();
      }
      options.onEvent?.(event);
    },
  });
  if (!options.stderr.isTTY) return run.result;
  // The tree drawn, each sub-agent's latest line and any retry come from the answer's own fold of the
  // tree's events (folded before this reader sees each event): nothing is folded again here.
  const { projection } = run;
  let answer = '';
  // Loaded for a terminal only: a pipe or a file never draws a tree.
  const { LiveTree } = await import('./tree-view.ts');
  live = new LiveTree(
    options.stderr,
    () => projection.tree(),
    () => answer,
    {
      activity: (runId) => latestLine(projection.get(runId)),
      notice: (runId) => retryNotice(projection.get(runId)),
    },
  );
  const stopped = new AbortController();
  // The tree's handle is read like any door reads it: every event from the first, until the tree ends.
  const following = (async () => {
    for await (const { event } of run.events({ signal: stopped.signal })) {
      answer = answerSoFar(answer, event);
    }
  })();
  live.start();
  try {
    return await run.result;
  } finally {
    stopped.abort();
    await following.catch(() => {});
    live.stop();
  }
}

/**
 * A line saying a background sub-agent's result reached the main agent (which answers it next, after what
 * it has said), or undefined for any other event.
 */
export function backgroundNotice(event: CadreEvent): string | undefined {
  if (event.type !== 'run-message' || event.depth !== 0 || !event.background) return undefined;
  const { agent, runId, status } = event.background;
  return `cadre: ${agent} (${runId}) finished in the background (${status}); the main agent goes on with its result\n`;
}

/**
 * The main answer as it is being written: text since the root's last tool-calling step (what came before
 * was thinking aloud between tool calls).
 */
function answerSoFar(answer: string, event: CadreEvent): string {
  if (event.depth !== 0) return answer;
  if (event.type === 'text-delta') return answer + event.delta;
  if (event.type === 'step-finish' && event.finishReason === 'tool-calls') return '';
  return answer;
}
