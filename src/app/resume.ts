import type { Approver } from '../core/approvals.ts';
import { UserError } from '../core/errors.ts';
import type { EventListener } from '../core/events.ts';
import type { RunTree } from '../core/run-tree.ts';
import type { FoundJournal } from '../store/journal-store.ts';
import type { Store } from '../store/store.ts';
import { type AskParts, type AskResult, askResult, startAnswer } from './ask.ts';
import type { Pricing } from './pricing.ts';
import { questionReplaced } from './sessions.ts';
import { storeAnswerOfStoredTree } from './stored-answers.ts';
import { outcomeOf, type TreeHandle } from './tree-handle.ts';
import { attachTree, reserveTree } from './trees.ts';

export interface ResumeRequest {
  userId: string;
  /** Any run of the interrupted tree (its root, a sub-agent, or an earlier attempt's root). */
  runId: string;
  signal?: AbortSignal;
  approver?: Approver;
  onEvent?: EventListener;
  /** Most trees this user may have running at once (the new attempt counts); more is refused. */
  maxConcurrent?: number;
  /**
   * Also a tree that ended `error` because its job failed on every worker (a dead letter an operator
   * retries: `cadre queue retry`), not only an interrupted one.
   */
  failed?: boolean;
}

export interface ResumeResult extends AskResult {
  /** The interrupted attempt this one continued. */
  resumedFrom: string;
}

/** What resuming needs: what `ask` does (its executor holds resume claims across processes). */
export interface ResumeParts extends Omit<AskParts, 'delegation'> {
  /** Journals whose resume has started in this process. */
  resuming: Set<string>;
}

/**
 * Continues an interrupted tree from its journal: the root runs again as a new attempt (a new run id,
 * recorded with the same journal), and every model step and tool result the journal holds is reused, not
 * redone, down to the sub-agents that had finished; unfinished ones continue the same way. The session
 * gets the answer the first attempt never wrote, in the same stored form as any answer; the person's
 * message is not added again. Resolves with the new attempt's handle once it has started.
 */
export async function resumeRun(
  parts: ResumeParts,
  request: ResumeRequest,
): Promise<TreeHandle<ResumeResult> & { resumedFrom: string }> {
  const { userId } = request;
  const rootId = (await parts.store.runs.rootOf(userId, request.runId)) ?? request.runId;
  const found = await parts.store.journal.find(userId, rootId);
  if (!found) {
    throw new UserError(
      'not_found',
      `There is no journal for run "${request.runId}": only runs started by this version of Cadre can be resumed.`,
      { runId: request.runId },
    );
  }
  const latest = found.attempts.at(-1)!;
  const session = found.spec.sessionId
    ? await parts.store.sessions.get(userId, found.spec.sessionId)
    : undefined;
  if (session && questionReplaced(session.messages, found.spec)) {
    throw new UserError(
      'question_replaced',
      `Run ${latest} answered a question that was sent again or edited since; its answer has no place in session ${session.id} any more.`,
      { runId: latest, sessionId: session.id },
    );
  }
  if (parts.live.get(userId, latest)) {
    throw new UserError('not_interrupted', `Run ${latest} is still running in this process.`, {
      runId: latest,
    });
  }
  // Claimed before the next await: two requests at once would otherwise both pass the checks above and
  // run the tree twice, each appending its answer to the session.
  if (parts.resuming.has(found.journalId)) {
    throw new UserError('not_interrupted', `Run ${latest} is already being resumed.`, { runId: latest });
  }
  parts.resuming.add(found.journalId);
  // Across processes: in the database when runs are jobs (any machine), else a lock file in CADRE_HOME.
  const across = await parts.executor.claimResume(found.journalId).catch((error: unknown) => {
    parts.resuming.delete(found.journalId);
    throw error;
  });
  const release = () => {
    if (!('heldBy' in across)) across.release();
    parts.resuming.delete(found.journalId);
  };
  try {
    if ('heldBy' in across) {
      throw new UserError(
        'not_interrupted',
        `Run ${request.runId} is already being resumed by another cadre process${across.heldBy ? ` (pid ${across.heldBy})` : ''}; its answer is stored when it ends.`,
        { runId: latest },
      );
    }
    // Another process may have run and stored an attempt between the look above and the claim.
    const now = (await parts.store.journal.find(userId, rootId)) ?? found;
    const handle = await resumeAttempt(parts, request, now, now.attempts.at(-1)!);
    handle.result.then(release, release);
    return handle;
  } catch (error) {
    release();
    throw error;
  }
}

/** Completes the session from the stored tree, or starts a new attempt of it (see `resumeRun`). */
async function resumeAttempt(
  parts: ResumeParts,
  request: ResumeRequest,
  found: FoundJournal,
  latest: string,
): Promise<TreeHandle<ResumeResult> & { resumedFrom: string }> {
  const { userId } = request;
  const tree = await parts.store.runs.getRunTree(userId, latest);
  const { spec } = found;
  // Killed after the tree ended but before its answer reached the session: the stored tree has the
  // answer, so the session is completed from it (nothing runs again).
  const retried = request.failed === true && tree?.status === 'error';
  if (tree && !retried && tree.status !== 'interrupted' && tree.status !== 'running' && spec.sessionId) {
    const completed = await completeSession(parts.store, userId, found, tree, parts.pricing);
    const attached = completed && (await attachTree(parts, userId, tree.id));
    if (completed && attached) {
      return {
        rootRunId: attached.rootRunId,
        events: (options) => attached.events(options),
        cancel: (reason) => attached.cancel(reason),
        result: Promise.resolve({ ...completed, resumedFrom: latest }),
        resumedFrom: latest,
      };
    }
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
  if (tree && !retried && tree.status !== 'interrupted') {
    throw new UserError(
      'not_interrupted',
      `Run ${latest} ended ${tree.status}; only an interrupted run (its process died) can be resumed.`,
      { runId: latest, status: tree.status },
    );
  }
  const slot = reserveTree(parts.live, userId, request.maxConcurrent);
  if (spec.sessionId) slot.inSession(spec.sessionId, spec.question?.id, spec.answerId);
  const runtime = await parts.runtime({ userId }).catch((error: unknown) => {
    slot.end();
    throw error;
  });
  // The tree goes on with the model it ran on, whatever CADRE_MODEL or the config says today: a history
  // (reasoning signatures, item references) is only valid on the provider that wrote it.
  const onItsModel = !spec.model && tree?.model ? { ...spec, model: tree.model } : spec;
  const handle = await startAnswer(parts, {
    userId,
    slot,
    runtime,
    spec: onItsModel,
    journal: { id: found.journalId, spec: onItsModel, resume: true },
    request,
    extra: { resumedFrom: latest },
  });
  return { ...handle, resumedFrom: latest };
}

/**
 * Appends a finished tree's answer to its session when the session lacks it (the process died between
 * the two writes), built from the tree's stored events like any answer; undefined when the session
 * already has it.
 */
async function completeSession(
  store: Pick<Store, 'sessions' | 'runs'>,
  userId: string,
  found: FoundJournal,
  tree: RunTree,
  pricing?: Pricing,
): Promise<AskResult | undefined> {
  const sessionId = found.spec.sessionId!;
  const stored = await storeAnswerOfStoredTree(
    store,
    { userId, rootRunId: tree.id, journalId: found.journalId, spec: { ...found.spec, question: undefined } },
    { pricing },
  );
  if (!stored) return undefined;
  const { envelope } = outcomeOf(tree);
  return askResult(sessionId, envelope, tree, pricing);
}
