import type { Approver } from '../core/approvals.ts';
import type { ResultEnvelope } from '../core/envelope.ts';
import { UserError } from '../core/errors.ts';
import type { EventListener } from '../core/events.ts';
import type { RunTree } from '../core/run-tree.ts';
import type { RunStatus } from '../core/status.ts';
import type { FoundJournal } from '../store/journal-store.ts';
import { type AskResult, appendAnswer, beginAnswer } from './ask.ts';
import type { Cadre } from './create-cadre.ts';
import { claimResume } from './resume-claim.ts';
import { questionReplaced } from './sessions.ts';

export interface ResumeRequest {
  userId: string;
  /** Any run of the interrupted tree (its root, a sub-agent, or an earlier attempt's root). */
  runId: string;
  signal?: AbortSignal;
  approver?: Approver;
  onEvent?: EventListener;
  /** Most trees this user may have running at once (the new attempt counts); more is refused. */
  maxConcurrent?: number;
}

export interface ResumeResult extends AskResult {
  /** The interrupted attempt this one continued. */
  resumedFrom: string;
}

/**
 * Continues an interrupted tree from its journal: the root runs again as a new attempt (a new run id,
 * recorded with the same journal), and every model step and tool result the journal holds is reused, not
 * redone, down to the sub-agents that had finished; unfinished ones continue the same way. The session
 * gets the answer the first attempt never wrote; the person's message is not added again.
 */
export async function resumeRun(cadre: Cadre, request: ResumeRequest): Promise<ResumeResult> {
  const { userId } = request;
  const rootId = (await cadre.store.runs.rootOf(userId, request.runId)) ?? request.runId;
  const found = await cadre.store.journal.find(userId, rootId);
  if (!found) {
    throw new UserError(
      'not_found',
      `There is no journal for run "${request.runId}": only runs started by this version of Cadre can be resumed.`,
      { runId: request.runId },
    );
  }
  const latest = found.attempts.at(-1)!;
  const session = found.spec.sessionId
    ? await cadre.store.sessions.get(userId, found.spec.sessionId)
    : undefined;
  if (session && questionReplaced(session.messages, found.spec)) {
    throw new UserError(
      'question_replaced',
      `Run ${latest} answered a question that was sent again or edited since; its answer has no place in session ${session.id} any more.`,
      { runId: latest, sessionId: session.id },
    );
  }
  if (cadre.live.get(userId, latest)) {
    throw new UserError('not_interrupted', `Run ${latest} is still running in this process.`, {
      runId: latest,
    });
  }
  // Claimed before the next await: two requests at once would otherwise both pass the checks above and
  // run the tree twice, each appending its answer to the session.
  const claimed = resumingJournals(cadre);
  if (claimed.has(found.journalId)) {
    throw new UserError('not_interrupted', `Run ${latest} is already being resumed.`, { runId: latest });
  }
  claimed.add(found.journalId);
  const across = claimResume(cadre.home, found.journalId);
  try {
    if ('heldBy' in across) {
      throw new UserError(
        'not_interrupted',
        `Run ${request.runId} is already being resumed by another cadre process${across.heldBy ? ` (pid ${across.heldBy})` : ''}; its answer is stored when it ends.`,
        { runId: latest },
      );
    }
    // Another process may have run and stored an attempt between the look above and the claim.
    const now = (await cadre.store.journal.find(userId, rootId)) ?? found;
    return await resumeAttempt(cadre, request, now, now.attempts.at(-1)!);
  } finally {
    if (!('heldBy' in across)) across.release();
    claimed.delete(found.journalId);
  }
}

/** The journals whose resume has started in this process, per Cadre. */
const resuming = new WeakMap<Cadre, Set<string>>();

function resumingJournals(cadre: Cadre): Set<string> {
  let journals = resuming.get(cadre);
  if (!journals) {
    journals = new Set();
    resuming.set(cadre, journals);
  }
  return journals;
}

/** Completes the session from the stored tree, or runs a new attempt of it (see `resumeRun`). */
async function resumeAttempt(
  cadre: Cadre,
  request: ResumeRequest,
  found: FoundJournal,
  latest: string,
): Promise<ResumeResult> {
  const { userId } = request;
  const tree = await cadre.store.runs.getRunTree(userId, latest);
  const { spec } = found;
  // Killed after the tree ended but before its answer reached the session: the stored tree has the
  // answer, so the session is completed from it (nothing runs again).
  if (tree && tree.status !== 'interrupted' && tree.status !== 'running' && spec.sessionId) {
    const completed = await completeSession(cadre, userId, spec.sessionId, tree);
    if (completed) return { ...completed, resumedFrom: latest };
  }
  // The code stays not_interrupted (what HTTP clients already match); the sentence says what is going on.
  if (tree?.status === 'running') {
    throw new UserError(
      'not_interrupted',
      latest === request.runId
        ? `Run ${latest} is still running; only an interrupted run (its process died) can be resumed.`
        : `Run ${request.runId} is already being resumed, as ${latest}, which is still running.`,
      { runId: latest, status: tree.status },
    );
  }
  if (tree && tree.status !== 'interrupted') {
    throw new UserError(
      'not_interrupted',
      `Run ${latest} ended ${tree.status}; only an interrupted run (its process died) can be resumed.`,
      { runId: latest, status: tree.status },
    );
  }
  const live = beginAnswer(cadre, userId, request.maxConcurrent);
  if (spec.sessionId) live.inSession(spec.sessionId, spec.question?.id);
  const signal = request.signal ? AbortSignal.any([request.signal, live.signal]) : live.signal;
  try {
    const runtime = await cadre.runtime({ userId });
    const { envelope, tree: run } = await runtime.run({
      agent: spec.agent,
      task: spec.task,
      history: spec.history,
      inputs: spec.inputs,
      signal,
      userId,
      journal: await cadre.store.journal.open(found.journalId),
      ...(spec.sessionId ? { sessionId: spec.sessionId } : {}),
      ...(spec.model ? { model: spec.model } : {}),
      ...(spec.prefetch ? { prefetch: spec.prefetch } : {}),
      ...(spec.freshResults ? { freshResults: true } : {}),
      ...(request.approver ? { approver: request.approver } : {}),
      onEvent: (event) => {
        if (event.type === 'run-start' && event.parentRunId === null) {
          void cadre.store.journal.begin(found.journalId, event.runId, userId, spec);
        }
        request.onEvent?.(event);
        live.observe(event);
      },
    });
    if (spec.sessionId) {
      await appendAnswer(
        cadre,
        userId,
        spec.sessionId,
        { role: 'assistant', content: envelope.summary, runId: envelope.runId },
        spec.question,
      );
    }
    return {
      answer: envelope.summary,
      status: envelope.status,
      sessionId: spec.sessionId ?? '',
      runId: envelope.runId,
      envelope,
      run,
      usage: envelope.subtreeUsage,
      resumedFrom: latest,
    };
  } finally {
    await cadre.store.runs.flush();
    live.end();
  }
}

/**
 * Appends a finished tree's answer to its session when the session lacks it (the process died between
 * the two writes); undefined when the session already has it.
 */
async function completeSession(
  cadre: Cadre,
  userId: string,
  sessionId: string,
  tree: RunTree,
): Promise<AskResult | undefined> {
  const session = await cadre.store.sessions.get(userId, sessionId);
  if (
    !session ||
    session.messages.some((message) => message.role === 'assistant' && message.runId === tree.id)
  ) {
    return undefined;
  }
  const status = tree.status as RunStatus;
  await cadre.store.sessions.append(userId, sessionId, {
    role: 'assistant',
    content: tree.summary,
    runId: tree.id,
  });
  const envelope: ResultEnvelope = {
    status,
    summary: tree.summary,
    usage: tree.usage,
    subtreeUsage: tree.subtreeUsage,
    runId: tree.id,
    ...(tree.data !== undefined ? { data: tree.data } : {}),
    ...(tree.sources ? { sources: tree.sources } : {}),
  };
  return {
    answer: tree.summary,
    status,
    sessionId,
    runId: tree.id,
    envelope,
    run: tree,
    usage: tree.subtreeUsage,
  };
}
