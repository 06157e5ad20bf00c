import type { ResultEnvelope, Source } from './envelope.ts';
import { emit, type RunFrame, subtreeUsage } from './run-frame.ts';
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
  const reason =
    status === 'timeout'
      ? `Stopped: the run went past its time limit of ${Math.round(frame.limits.timeoutMs / 1000)} s.`
      : 'Cancelled before it finished.';
  emit(frame, { type: 'run-error', status, message: reason });
  return closeRun(frame, status, partial ? `${partial}\n\n[${reason}]` : reason, {});
}

/** Waits for the run's children, then emits `run-finish` and returns the envelope. */
export async function closeRun(
  frame: RunFrame,
  status: RunStatus,
  summary: string,
  extra: { data?: unknown; sources?: Source[] },
): Promise<ResultEnvelope> {
  await Promise.allSettled(frame.children);
  frame.tree.frames.delete(frame.id);
  frame.numbering.goLive();
  const envelope: ResultEnvelope = {
    status,
    summary,
    ...extra,
    usage: frame.usage,
    subtreeUsage: subtreeUsage(frame),
    runId: frame.id,
    ...(frame.readUntrusted ? { untrusted: true } : {}),
  };
  emit(frame, {
    type: 'run-finish',
    status,
    summary,
    ...extra,
    usage: envelope.usage,
    subtreeUsage: envelope.subtreeUsage,
    ...(envelope.untrusted ? { untrusted: true } : {}),
  });
  return envelope;
}
