import type { ModelMessage } from 'ai';
import type { RunState } from './status.ts';

/**
 * Finished runs' conversations, kept beyond the run that started them: what `continue_agent` (a later
 * step, a resumed attempt, another worker, a later turn of the session) and a person's follow-up go on
 * from. A tree's record offers them where the tree has a store (`TreeRecord.conversations`); the run
 * store implements this port as it is. Without one, a run reaches only its own children that finished
 * in its memory.
 */
export interface ConversationKeeper {
  /**
   * Keeps the finished run `runId`'s conversation for its user: its JSON, or null when it was larger than
   * the run's `limits.maxStoredOutputChars` (`chars` says how large).
   */
  keepConversation(
    userId: string,
    runId: string,
    kept: { conversation: string | null; chars: number },
  ): Promise<void>;
  /** The user's run `runId` with its kept conversation; undefined when the user has no such run. */
  keptConversation(userId: string, runId: string): Promise<KeptConversation | undefined>;
}

/** A run as continuing it needs it, with its kept conversation. */
export interface KeptConversation {
  runId: string;
  agent: string;
  rootRunId: string;
  parentId: string | null;
  /** The session its tree answered in (its root's), if any. */
  sessionId: string | null;
  status: RunState;
  /** Its messages as kept; undefined when none were (a run that keeps none, or one too large: `chars`). */
  messages?: ModelMessage[];
  /** How large (characters of JSON) its conversation was, when it ended with one. */
  chars?: number;
}

/** Where a continuation comes from: the tree that asks (its user, its root and its session). */
export interface ContinuationScope {
  userId: string;
  rootRunId: string;
  sessionId?: string | undefined;
}

/**
 * Whether `scope` may go on with `kept`, and from what: the run must be the same user's (the store
 * answers only with theirs), in the same session (or, for a tree answering in none, the same tree), a
 * sub-agent's (or a follow-up of one), ended, with its conversation kept. A reason otherwise, for the
 * model or the person who asked. A run out of reach reads exactly as one that does not exist.
 */
export function continuationOf(
  kept: KeptConversation | undefined,
  runId: string,
  scope: ContinuationScope,
): { agent: string; conversation: ModelMessage[] } | { refused: string } {
  const reachable =
    kept !== undefined &&
    (scope.sessionId ? kept.sessionId === scope.sessionId : kept.rootRunId === scope.rootRunId);
  if (!reachable) return { refused: `there is no finished sub-agent run "${runId}" in this conversation` };
  if (kept.status === 'running') return { refused: `run "${runId}" has not finished yet` };
  if (kept.messages) return { agent: kept.agent, conversation: kept.messages };
  if (kept.chars !== undefined)
    return {
      refused: `run "${runId}"'s conversation was ${kept.chars.toLocaleString('en')} characters, more than limits.maxStoredOutputChars, so it was not kept and cannot be continued`,
    };
  if (kept.parentId === null)
    return {
      refused: `run "${runId}" is the root of its tree, not a sub-agent run: ask in its chat instead`,
    };
  return {
    refused: `run "${runId}" kept no conversation to go on from (it ${kept.status === 'interrupted' ? 'was interrupted before it ended' : 'ended before conversations were kept'})`,
  };
}

/** A run's conversation as kept: its JSON, or only its size when that is past `maxChars`. */
export function keptForm(
  conversation: ModelMessage[],
  maxChars: number,
): { conversation: string | null; chars: number } {
  const json = JSON.stringify(conversation);
  return { conversation: json.length > maxChars ? null : json, chars: json.length };
}
