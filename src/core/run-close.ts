import type { ModelMessage } from 'ai';
import type { ResultEnvelope, Source } from './envelope.ts';
import { ParentEnded, RunStopped } from './errors.ts';
import { keptForm } from './kept-conversations.ts';
import { emit, type RunFrame, subtreeUsage } from './run-frame.ts';
import { citedSources } from './sources.ts';
import type { RunStatus } from './status.ts';

/** How a run ends: its interruptions (time limit, cancellation) and the closing `run-finish` with its envelope. */

/** The run's interruption, if its time limit passed or it was cancelled. */
export function interruption(frame: RunFrame): 'timeout' | 'cancelled' | undefined {
  if (frame.timeoutSignal.aborted) return 'timeout';
  if (frame.signal.aborted) return 'cancelled';
  return undefined;
}

/** Closes an interrupted run, keeping what it had said so far with the reason after it. */
export function finishInterrupted(frame: RunFrame, status: 'timeout' | 'cancelled', partial: string) {
  // Stopped while it replayed an earlier attempt: its end is new, numbered after what that attempt stored.
  frame.numbering.goLive();
  const stopped = status === 'cancelled' ? personStop(frame) : undefined;
  const cause: unknown = frame.signal.reason;
  const reason =
    status === 'timeout'
      ? `Stopped: the run went past its time limit of ${Math.round(frame.limits.timeoutMs / 1000)} s.`
      : stopped !== undefined
        ? `Stopped by the person${stopped && stopped !== 'stopped by the person' ? `: ${stopped}` : ''}.`
        : cause instanceof ParentEnded
          ? `Stopped: ${cause.message}.`
          : 'Cancelled before it finished.';
  emit(frame, { type: 'run-error', status, message: reason });
  const summary = partial ? `${partial}\n\n[${reason}]` : reason;
  if (stopped === undefined) return closeRun(frame, status, summary, {});
  // Its parent goes on with what it had: the text so far, the sources its tools returned, the calls it
  // completed, and that the person stopped it (so the parent's model does not simply ask again).
  const cited = citedSources(partial, frame.seenUrls);
  const returned = [...frame.seenUrls]
    .filter((url) => !cited.some((source) => source.url === url))
    .slice(0, 20)
    .map((url) => ({ url, verified: true }));
  const sources = [...cited, ...returned];
  return closeRun(frame, status, summary, sources.length ? { sources } : {}, {
    stoppedBy: 'person',
    completedCalls: frame.completedCalls,
  });
}

/** Why a person stopped this run alone (or one above it, stopped alone), when that is how it ended. */
function personStop(frame: RunFrame): string | undefined {
  const reason: unknown = frame.signal.reason;
  return reason instanceof RunStopped ? reason.message : undefined;
}

/**
 * Keeps a run's conversation in the tree's record. A store that fails here costs only the continuing of
 * this run later (its parent still holds it while it runs), not the run's result: nothing more is done.
 */
async function keepConversation(frame: RunFrame, conversation: ModelMessage[]): Promise<void> {
  const keeper = frame.tree.record.conversations;
  if (!keeper) return;
  const kept = keptForm(conversation, frame.limits.maxStoredOutputChars);
  await keeper.keepConversation(frame.tree.userId, frame.id, kept).catch(() => {});
}

/** Waits for the run's children, then emits `run-finish` and returns the envelope. */
export async function closeRun(
  frame: RunFrame,
  status: RunStatus,
  summary: string,
  extra: { data?: unknown; sources?: Source[] },
  stop?: Pick<ResultEnvelope, 'stoppedBy' | 'completedCalls'>,
): Promise<ResultEnvelope> {
  await Promise.allSettled(frame.children);
  frame.tree.frames.delete(frame.id);
  frame.numbering.goLive();
  // A sub-agent's conversation (or a follow-up's) may be continued: with its parent, which keeps it while
  // it runs, and in the store before its end is told, so a later step, attempt, worker or turn finds it.
  const conversation = frame.parent || frame.continues ? frame.conversation() : undefined;
  if (conversation) await keepConversation(frame, conversation);
  const envelope: ResultEnvelope = {
    status,
    summary,
    ...extra,
    usage: frame.usage,
    subtreeUsage: subtreeUsage(frame),
    runId: frame.id,
    ...(frame.readUntrusted ? { untrusted: true } : {}),
    ...(stop?.stoppedBy ? { stoppedBy: stop.stoppedBy } : {}),
    ...(stop?.completedCalls?.length ? { completedCalls: stop.completedCalls } : {}),
    // A sub-agent's conversation goes to its parent, which may continue it (continue_agent).
    ...(frame.parent && conversation ? { conversation } : {}),
  };
  emit(frame, {
    type: 'run-finish',
    status,
    summary,
    ...extra,
    usage: envelope.usage,
    subtreeUsage: envelope.subtreeUsage,
    ...(envelope.untrusted ? { untrusted: true } : {}),
    ...(envelope.stoppedBy ? { stoppedBy: envelope.stoppedBy } : {}),
  });
  return envelope;
}
