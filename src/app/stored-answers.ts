import type { ResultEnvelope } from '../core/envelope.ts';
import { CadreError } from '../core/errors.ts';
import type { CadreEvent } from '../core/events.ts';
import type { RunTree } from '../core/run-tree.ts';
import type { ResumeSpec } from '../store/journal-store.ts';
import type { Store } from '../store/store.ts';
import { AnswerRecorder } from './answer/stored-answer.ts';
import type { Pricing } from './pricing.ts';
import { appendAnswer } from './session-turn.ts';
import { outcomeOf } from './tree-handle.ts';

/**
 * Storing a tree's answer in the session its spec names, where the tree runs: in this process from the
 * answer's own fold as the events come (in-process-trees.ts), or, for a tree run as jobs, by the worker
 * that ends its root, from the tree's stored events (its children ran on other workers). The asker only
 * follows; an answer is stored whether or not anyone still listens.
 */

/** Stores a tree's answer in the session its spec names, in the stored form every door shares. */
export async function storeAnswer(
  sessions: Store['sessions'],
  userId: string,
  spec: ResumeSpec,
  envelope: ResultEnvelope,
  recorder: AnswerRecorder,
): Promise<void> {
  if (!spec.sessionId) return;
  const message = recorder.message({ status: envelope.status });
  const stored = {
    role: 'assistant' as const,
    content: envelope.summary,
    runId: envelope.runId,
    parts: message.parts,
    ...(message.metadata !== undefined ? { metadata: message.metadata } : {}),
  };
  try {
    await appendAnswer(sessions, userId, spec.sessionId, { ...stored, id: spec.answerId }, spec.question);
  } catch (error) {
    // The id is taken: an earlier attempt's answer was stored before its process died, so this one, the
    // resumed attempt's, is stored beside it under an id of its own.
    if (!spec.answerId || CadreError.isInstance(error)) throw error;
    await appendAnswer(sessions, userId, spec.sessionId, stored, spec.question);
  }
}

/** The recorder of the answer a tree's spec stands for (its message id, its session). */
export function answerRecorder(spec: ResumeSpec, journalId: string, pricing?: Pricing): AnswerRecorder {
  return new AnswerRecorder(spec.answerId ?? `msg_${journalId}`, spec.sessionId ?? '', pricing);
}

/**
 * Stores the answer of the tree rooted at `rootRunId`, folded from its stored events and then `closing`
 * (the events that close it, about to be recorded: the answer is stored before they are, so whoever sees
 * the tree end finds its answer), unless its session holds it already (a job tried again, a process that
 * died between the two writes), or its root has not ended (handed over to another job, which will).
 * Returns the tree as folded, when its answer was stored.
 */
export async function storeAnswerOfStoredTree(
  store: Pick<Store, 'runs' | 'sessions'>,
  tree: { userId: string; rootRunId: string; journalId: string; spec: ResumeSpec },
  options: { pricing?: Pricing | undefined; closing?: readonly CadreEvent[] } = {},
): Promise<RunTree | undefined> {
  const { userId, rootRunId, spec } = tree;
  if (!spec.sessionId) return undefined;
  const session = await store.sessions.get(userId, spec.sessionId);
  if (
    !session ||
    session.messages.some((message) => message.role === 'assistant' && message.runId === rootRunId)
  )
    return undefined;
  const recorder = answerRecorder(spec, tree.journalId, options.pricing);
  for (const { event } of await store.runs.events(userId, rootRunId)) recorder.event(event);
  for (const event of options.closing ?? []) recorder.event(event);
  const folded = recorder.projection.tree(rootRunId);
  // A root still running was handed to another job (set aside, its worker stopping): that one stores it.
  if (!folded || folded.status === 'running') return undefined;
  await storeAnswer(store.sessions, userId, spec, outcomeOf(folded).envelope, recorder);
  return folded;
}
