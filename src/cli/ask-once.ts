import type { ModelMessage } from 'ai';
import type { Cadre } from '../app/create-cadre.ts';
import { RunTreeBuilder } from '../core/run-tree.ts';
import type { RunOutcome } from '../core/runtime.ts';
import { type ApprovalMode, cliApprover } from './approval-prompt.ts';
import { RunActivity } from './run-activity.ts';
import { LiveTree } from './tree-view.ts';

export interface AskOptions {
  question: string;
  agent?: string;
  model?: string;
  sessionId: string;
  userId: string;
  inputs?: Record<string, unknown>;
  signal: AbortSignal;
  /** Where the live tree goes; nothing is drawn when it is not a terminal. */
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  /** How tool calls that need approval are decided: flags, or a question on the terminal `stdin` is. */
  approval?: { mode: ApprovalMode; stdin: NodeJS.ReadableStream & { isTTY?: boolean } };
}

/**
 * Asks one question in a session: the person's message is stored before the run starts, the answer after
 * it ends (with its run id), and the live tree is drawn on a terminal meanwhile.
 */
export async function askOnce(cadre: Cadre, options: AskOptions): Promise<RunOutcome> {
  const session = cadre.sessions.get(options.userId, options.sessionId);
  const history: ModelMessage[] = (session?.messages ?? []).map((message) => ({
    role: message.role,
    content: message.content,
  }));
  cadre.sessions.append(options.userId, options.sessionId, { role: 'user', content: options.question });
  const agent = options.agent ?? 'main';
  const runtime = cadre.runtime({ userId: options.userId });
  const builder = new RunTreeBuilder();
  let answerSoFar = '';
  const activity = new RunActivity();
  const live = options.stderr.isTTY
    ? new LiveTree(
        options.stderr,
        () => builder.roots()[0],
        () => answerSoFar,
        { activity: (runId) => activity.latest(runId) },
      )
    : undefined;
  live?.start();
  try {
    const prefetch = agent === 'main' ? cadre.prefetchFor(options.question) : undefined;
    const outcome = await runtime.run({
      agent,
      task: options.question,
      history,
      signal: options.signal,
      sessionId: options.sessionId,
      userId: options.userId,
      ...(options.model ? { model: options.model } : {}),
      ...(options.inputs ? { inputs: options.inputs } : {}),
      ...(prefetch ? { prefetch } : {}),
      ...(options.approval
        ? {
            approver: cliApprover({
              ...options.approval,
              stderr: options.stderr,
              ...(live ? { pause: () => live.pause() } : {}),
            }),
          }
        : {}),
      onEvent: (event) => {
        builder.apply(event);
        activity.apply(event);
        if (event.type === 'text-delta' && event.depth === 0) answerSoFar += event.delta;
        // A new model call starts a new answer; what came before was thinking aloud between tool calls.
        if (event.type === 'step-finish' && event.depth === 0 && event.finishReason === 'tool-calls')
          answerSoFar = '';
      },
    });
    cadre.sessions.append(options.userId, options.sessionId, {
      role: 'assistant',
      content: outcome.envelope.summary,
      runId: outcome.envelope.runId,
    });
    return outcome;
  } finally {
    live?.stop();
    cadre.runs.flush();
  }
}
