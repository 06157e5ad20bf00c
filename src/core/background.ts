import type { AgentDefinition } from './agent-definition.ts';
import { type ResultEnvelope, toModelView } from './envelope.ts';
import { describeError, ParentEnded } from './errors.ts';
import { childReturned, type RunFrame } from './run-frame.ts';
import type { RunStatus } from './status.ts';
import { journaledCall, traceToolCall } from './tool-bindings.ts';
import { zeroUsage } from './usage.ts';

/**
 * Sub-agents in the background. A delegation to an agent whose definition says `background: true` (or
 * `allowed`, with `background: true` in the call) returns at once with a `BackgroundStart`; the run goes
 * on beside its parent, and its envelope is handed to the parent's inbox as a message when it ends: it
 * joins the parent's next model step, or, once the parent has answered, a new turn the parent answers
 * (see `nextDelivery`). The delivery is journaled where it joins (like a person's message), and so is
 * that it was delivered: a resume replays it once, and starts again (from its own journal) only a
 * background run whose envelope had not reached its parent.
 */

/** Starts a child run (delegation.ts's StartChild, as this file needs it). */
type StartChild = (request: {
  definition: AgentDefinition;
  task: string;
  inputs: Record<string, unknown>;
  parent: RunFrame;
  toolCallId: string;
  runId: string;
  background: true;
}) => Promise<ResultEnvelope>;

/** What a delegation started in the background returns at once (its tool call's output). */
export interface BackgroundStart {
  background: true;
  status: 'running';
  runId: string;
  agent: string;
  summary: string;
}

/** The journal key (kind `message`) saying that the background run of `toolCallId` was delivered. */
export function deliveredKey(toolCallId: string): string {
  return `delivered:${toolCallId}`;
}

export function isBackgroundStart(output: unknown): output is BackgroundStart {
  return (output as Partial<BackgroundStart> | null)?.background === true;
}

/** Whether this call runs in the background: its definition says so, or allows it and the call asks. */
export function wantsBackground(definition: AgentDefinition, input: Record<string, unknown>): boolean {
  return definition.background === true || (definition.background === 'allowed' && input.background === true);
}

/** Whether `parent`'s tree may start one more background run (`maxBackground`). */
export function backgroundRoom(parent: RunFrame): boolean {
  return parent.tree.background.running < parent.limits.maxBackground;
}

/**
 * Starts `definition` on `task` in the background for `parent`'s tool call `toolCallId`: the call's
 * `tool-call` and `tool-result` events (the result a `BackgroundStart`, journaled), then the run itself,
 * unless an earlier attempt had already delivered its envelope.
 */
export async function delegateInBackground(
  parent: RunFrame,
  call: { definition: AgentDefinition; task: string; inputs: Record<string, unknown>; toolCallId: string },
  input: Record<string, unknown>,
  startChild: StartChild,
  runIdFor: (toolCallId: string) => string,
  maxResultChars: number,
): Promise<BackgroundStart> {
  const { definition, toolCallId } = call;
  const runId = runIdFor(toolCallId);
  parent.tree.background.running++;
  let started: BackgroundStart;
  try {
    started = await traceToolCall(
      parent,
      { toolCallId, name: definition.name, input, background: true },
      () =>
        journaledCall(parent, toolCallId, async () => ({
          background: true as const,
          status: 'running' as const,
          runId,
          agent: definition.name,
          summary: `${definition.name} is running in the background (run_id ${runId}). Do not wait for it or start it again: its result will come to you as a message when it ends. Go on with your work, or answer the person now and say that ${definition.name} is still working.`,
        })),
    );
  } catch (error) {
    parent.tree.background.running--;
    throw error;
  }
  const journal = parent.tree.record.journal;
  if (journal?.get(parent.journalKey, 'message', deliveredKey(toolCallId)) !== undefined) {
    parent.tree.background.running--;
    return started;
  }
  const messageId = `background:${toolCallId}`;
  const delivered = (async () => {
    let envelope: ResultEnvelope;
    try {
      envelope = await startChild({ ...call, parent, runId, background: true });
      childReturned(parent, envelope);
    } catch (error) {
      envelope = {
        status: 'error',
        summary: describeError(error),
        usage: zeroUsage(),
        subtreeUsage: zeroUsage(),
        runId,
      };
    } finally {
      parent.tree.background.running--;
    }
    const view = toModelView(envelope, maxResultChars, definition.name);
    const sent = parent.inbox.send({
      id: messageId,
      text: JSON.stringify(view),
      background: { runId: envelope.runId, agent: definition.name, status: envelope.status, toolCallId },
    });
    // Had already (an earlier attempt's delivery, replayed): nothing more to wait for.
    if (!sent) parent.background.delete(messageId);
    return envelope;
  })();
  parent.background.set(messageId, delivered);
  parent.children.add(delivered);
  return started;
}

/**
 * Whether `frame`, whose model has answered, takes another turn for a background run's envelope (or for a
 * person's message that comes while it waits for one): at once when one waits in its inbox or an earlier
 * attempt recorded one before its step `steps` (a replay); else it waits until one of its background runs
 * ends (true) or none is left or it is stopped (false).
 */
export async function nextDelivery(frame: RunFrame, steps: number): Promise<boolean> {
  const journal = frame.tree.record.journal;
  // A message an earlier attempt added before that step (a background result, or a person's message that
  // came while the agent waited for one) started a turn there: the replay takes it again.
  const recorded = journal?.get(frame.journalKey, 'message', String(steps)) as
    | { messages: unknown[] }
    | undefined;
  if (recorded?.messages.length) return true;
  // Everything before is committed: a boundary for the record (a job that replayed up to here starts
  // taking the person's messages for the run now; a worker that is stopping hands the run over here).
  if (frame.background.size) frame.tree.record.atBoundary?.();
  for (;;) {
    if (frame.signal.aborted) return false;
    if (frame.inbox.waiting) return true;
    if (!frame.background.size) return false;
    await Promise.race([...frame.background.values(), frame.inbox.arrival(), stopped(frame.signal)]);
  }
}

/**
 * Stops `frame`'s background runs still going when it ends with `status` without another turn to take
 * their results in (its turn limit, an error, its budget): each ends `cancelled`, saying why, rather than
 * go on spending tokens for a result no one reads, and the run's close does not wait for them.
 */
export function stopBackground(frame: RunFrame, status: RunStatus): void {
  if (!frame.background.size || frame.backgroundStop.signal.aborted) return;
  const who = frame.parent ? `${frame.definition.name} agent that started it` : 'main agent';
  frame.backgroundStop.abort(new ParentEnded(`the ${who} ended (${status}) and cannot take its result`));
}

function stopped(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
