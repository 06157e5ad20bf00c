import type { ModelMessage } from 'ai';
import { UserError } from '../core/errors.ts';
import { continuationOf } from '../core/kept-conversations.ts';
import type { RunStore } from '../store/store.ts';

/**
 * A person's follow-up of a finished sub-agent run (the card's "Ask research a follow-up", `cadre runs
 * say` or `POST /api/runs/:id/messages` on a run that has ended): a new turn of the run's session whose
 * root is that run's agent, going on from the run's kept conversation with the person's message as the
 * next thing asked (`continues: <id>`), its usage counted in its own tree, its answer stored in the
 * session (so the main agent reads it in the history of its next turn).
 */
export interface FollowUp {
  runId: string;
  agent: string;
  /** The session the run's tree answered in; none: the follow-up starts one. */
  sessionId: string | undefined;
  /** The run's kept conversation: the follow-up's history. */
  history: ModelMessage[];
}

/** What a follow-up's question carries in its stored message's metadata. */
export interface FollowUpMark {
  followUp: { runId: string; agent: string };
}

/**
 * The caller's finished run `runId` as a follow-up goes on from it. Refused (409) for a run still
 * running, a tree's root (`run_not_running`: its chat is where to ask), or a run whose conversation was
 * not kept (`conversation_not_kept`, with the reason); someone else's run is no run (404).
 */
export async function followUpOf(
  runs: Pick<RunStore, 'keptConversation'>,
  userId: string,
  runId: string,
): Promise<FollowUp> {
  const kept = await runs.keptConversation(userId, runId);
  if (!kept)
    throw new UserError('unknown_run', `There is no run "${runId}". See: cadre runs list`, { runId });
  if (kept.status === 'running')
    throw new UserError('run_active', `Run "${runId}" is still running: a message joins it instead.`, {
      runId,
    });
  const found = continuationOf(kept, runId, {
    userId,
    rootRunId: kept.rootRunId,
    sessionId: kept.sessionId ?? undefined,
  });
  if ('refused' in found) {
    const root = kept.parentId === null && kept.chars === undefined;
    throw new UserError(
      root ? 'run_not_running' : 'conversation_not_kept',
      `Run "${runId}" is not running, and cannot be followed up: ${found.refused}.`,
      { runId },
    );
  }
  return { runId, agent: found.agent, sessionId: kept.sessionId ?? undefined, history: found.conversation };
}

/** The follow-up a stored question is, when it is one. */
export function followUpMarkOf(metadata: unknown): FollowUpMark['followUp'] | undefined {
  const mark = (metadata as Partial<FollowUpMark> | undefined)?.followUp;
  return mark && typeof mark.runId === 'string' && typeof mark.agent === 'string' ? mark : undefined;
}
