import { UserError } from '../core/errors.ts';
import type { CadreEvent } from '../core/events.ts';
import type { RunTree } from '../core/run-tree.ts';
import type { Cadre } from './create-cadre.ts';

function notFound(runId: string): UserError {
  return new UserError('not_found', `There is no run "${runId}".`, { runId });
}

/** The run tree JSON of one of the user's runs (the subtree when `runId` is a child). */
export function getRun(cadre: Cadre, userId: string, runId: string): RunTree {
  const tree = cadre.runs.getRunTree(runId, { userId });
  if (!tree) throw notFound(runId);
  return tree;
}

/** Stops the user's live tree that holds `runId` (root or child); every run so ended is recorded. */
export function cancelRun(cadre: Cadre, userId: string, runId: string): { cancelled: boolean } {
  if (cadre.live.cancel(userId, runId)) return { cancelled: true };
  // A finished run of this user: nothing to stop, which is not an error.
  if (cadre.runs.getRunTree(runId, { userId })) return { cancelled: false };
  throw notFound(runId);
}

/** How a reader follows a tree's events: each with its position in the tree, from 0. */
export interface EventFollower {
  event: (event: CadreEvent, index: number) => void;
  end: () => void;
}

/**
 * Replays the events of the tree holding `runId` after position `after` (-1 for all), then follows it
 * while it runs. Returns a function that stops following. A finished tree is replayed from the store.
 */
export function followRunEvents(
  cadre: Cadre,
  userId: string,
  runId: string,
  after: number,
  follower: EventFollower,
): () => void {
  const live = cadre.live.get(userId, runId);
  if (live) return cadre.live.follow(live, after, follower.event, follower.end);
  const rootId = cadre.runs.rootId(runId, { userId });
  if (!rootId) throw notFound(runId);
  const events = cadre.runs.events(rootId);
  for (let index = Math.max(0, after + 1); index < events.length; index++)
    follower.event(events[index]!, index);
  follower.end();
  return () => {};
}
