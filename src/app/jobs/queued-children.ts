import { createHash } from 'node:crypto';
import type { AgentDefinition } from '../../core/agent-definition.ts';
import type { ChildRunner } from '../../core/child-runs.ts';
import type { ResultEnvelope } from '../../core/envelope.ts';
import { ParentEnded, RunHandedOff, RunStopped } from '../../core/errors.ts';
import type { RuntimeLimits } from '../../core/limits.ts';
import { zeroUsage } from '../../core/usage.ts';
import type { JobSignals, TreeQueue } from '../../store/job-queue.ts';
import { Wakeup } from '../follow-events.ts';
import { runJobKey } from './forget-jobs.ts';
import { type RunJobData, runJobRequest, type TreeModels } from './job-data.ts';

/** How long a stopped child may take to end before its parent stops waiting for it. */
const STOP_GRACE_MS = 5_000;

/**
 * The id of the child run a parent's tool call starts: derived from the two, so a parent that runs again
 * (its worker died, its job was retried) and replays the same tool call reaches the same run and job.
 */
export function childRunId(parentRunId: string, toolCallId = 'child'): string {
  return `run_${createHash('sha256').update(`${parentRunId}\n${toolCallId}`).digest('hex').slice(0, 20)}`;
}

/**
 * Children as jobs: each sub-agent run goes on the queue for any worker to take; its parent waits for the
 * job's end without holding a slot (`whileWaiting` gives the parent's slot back for the wait and takes
 * one again after), so a tree deeper or wider than the workers' capacity cannot deadlock. Stopping the
 * parent (cancel, timeout) tells whichever worker runs the child.
 */
export function queuedChildren(options: {
  jobs: TreeQueue & JobSignals;
  journalId: string;
  limits?: Partial<RuntimeLimits>;
  models?: TreeModels;
  agents?: AgentDefinition[];
  /**
   * Runs the wait for child job `childJobId` (the worker gives the parent's slot back meanwhile); `stop`
   * is the parent's signal: a parent being stopped is not set aside.
   */
  whileWaiting: <T>(childJobId: string, stop: AbortSignal, wait: () => Promise<T>) => Promise<T>;
}): (inProcess: ChildRunner) => ChildRunner {
  const { jobs } = options;
  return () => ({
    runIdFor: (parentRunId, toolCallId) => childRunId(parentRunId, toolCallId),
    run: async (request, cancellation) => {
      const runId = childRunId(request.parentRunId, request.parentToolCallId);
      const key = runJobKey(runId);
      const data: RunJobData = {
        ...runJobRequest(request),
        runId,
        journalId: options.journalId,
        ...(options.limits ? { limits: options.limits } : {}),
        ...(options.models ? { models: options.models } : {}),
        ...(options.agents ? { agents: options.agents } : {}),
      };
      await jobs.enqueue('run', key, data);
      return options.whileWaiting(jobs.jobId(key), cancellation.signal, () =>
        childEnd(jobs, key, runId, cancellation.signal),
      );
    },
  });
}

/** Waits for a child's job to end and hands back its envelope (an error one when the job failed for good). */
async function childEnd(
  jobs: TreeQueue & JobSignals,
  key: string,
  runId: string,
  signal: AbortSignal,
): Promise<ResultEnvelope> {
  const jobId = jobs.jobId(key);
  // Woken when the queue says the job ended (kept if it says so while the state is being read), or stopped.
  const wakeUp = new Wakeup();
  const unlisten = await jobs.listen('ended', (payload) => {
    if (payload === jobId || payload === '*') wakeUp.wake();
  });
  const onAbort = () => wakeUp.wake();
  signal.addEventListener('abort', onAbort);
  let stoppedAt: number | undefined;
  try {
    for (;;) {
      // The parent goes on in another process, which finds this same child job: it is not stopped.
      if (signal.reason instanceof RunHandedOff)
        return { ...failedEnvelope(runId, 'handed off'), status: 'cancelled' };
      if (signal.aborted && stoppedAt === undefined) {
        stoppedAt = Date.now();
        const reason = signal.reason instanceof Error ? signal.reason.message : 'stopped';
        // A parent a person stopped alone: its child is part of what they stopped, and ends the same way.
        const alone = signal.reason instanceof RunStopped ? { alone: true } : {};
        // A background run whose parent can take no more turns: it says so where it ends (background.ts).
        const ended = signal.reason instanceof ParentEnded ? { ended: true } : {};
        await jobs.signal('stop', JSON.stringify({ run: runId, reason, ...alone, ...ended })).catch(() => {});
      }
      const state = await jobs.state('run', key);
      if (state.state === 'completed') return state.output as ResultEnvelope;
      if (state.state === 'failed') return failedEnvelope(runId, state.error);
      if (state.state === 'missing') return failedEnvelope(runId, 'its job is gone from the queue');
      if (stoppedAt !== undefined && Date.now() - stoppedAt >= STOP_GRACE_MS)
        return { ...failedEnvelope(runId, 'stopped'), status: 'cancelled' };
      // Woken by the job's end (NOTIFY `ended`, `*` after a lost connection) or the parent's stop; a stopped
      // child is given until the grace ends, then reported stopped: no timer stands in for the end.
      await wakeUp.wait(stoppedAt === undefined ? undefined : stoppedAt + STOP_GRACE_MS - Date.now());
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    unlisten();
  }
}

function failedEnvelope(runId: string, why: string): ResultEnvelope {
  return {
    status: 'error',
    summary: `The sub-agent run failed on every worker that took it: ${why}`,
    usage: zeroUsage(),
    subtreeUsage: zeroUsage(),
    runId,
  };
}
