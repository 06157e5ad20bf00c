import type { BudgetLedger, ChildRunner } from './child-runs.ts';
import type { BackgroundDelivery, CadreEvent, EventBody } from './events.ts';
import type { TreeJournal } from './journal.ts';
import type { ConversationKeeper } from './kept-conversations.ts';

/**
 * The durable side of one tree, as the run loop sees it: where its steps are committed and found again
 * (the journal), where each run an earlier attempt began goes on (its resume point, worked out here from
 * what was stored, not threaded through the loop), the tree's token budget, and how the process running
 * it meets the rest (its name on each run, the step boundaries where it may hand runs over, and where its
 * children run). The loop knows nothing of jobs or stores: a tree run once in memory passes no record
 * (or one with a journal); a tree run as jobs passes the job's (`app/jobs/job-record.ts`); a tree run
 * in this process on a store passes the embedded one (`app/tree-records.ts`).
 */
export interface TreeRecord {
  /** The root run's id when it was decided before the tree started (a queued tree); else a new one. */
  readonly rootRunId?: string | undefined;
  /** Commits the tree's model steps and tool results; when it holds an earlier attempt's, they are reused. */
  readonly journal?: TreeJournal | undefined;
  /** The tokens the whole tree has spent, when processes share it; else one in memory. */
  readonly ledger?: BudgetLedger | undefined;
  /** Names the process executing the tree's runs here (runs as jobs), on each run-start and run-resume. */
  readonly worker?: string | undefined;
  /**
   * Where finished runs' conversations are kept (the store), so `continue_agent` reaches a run that
   * finished in another attempt, process or turn; without it, only children finished in this memory.
   */
  readonly conversations?: ConversationKeeper | undefined;
  /** Where `runId`, begun by an earlier attempt, goes on: undefined for a run that starts anew. */
  resumePoint?(runId: string): ResumePoint | undefined;
  /**
   * Called at each step boundary (before a model request or a tool call made anew, with everything before
   * it committed): where a worker that is stopping hands its runs over by aborting them (RunHandedOff).
   */
  atBoundary?(): void;
  /** Where the tree's children run (e.g. as jobs on a queue), over the runtime's runner. */
  childRunner?(inProcess: ChildRunner): ChildRunner;
  /**
   * Handed once by the loop, for each tree (or queued part of one) it runs from this record: how a
   * person's steering that reaches this process acts on the runs going on here (a stop of one run).
   */
  steer?(steering: TreeSteering): void;
}

/** What steering a person's request does to the runs of a tree going on in this process. */
export interface TreeSteering {
  /**
   * Stops run `runId` and its subtree alone: it ends `cancelled` and its parent receives what it had done
   * and goes on. False when no such run goes on here.
   */
  stopRun(runId: string, reason: string): boolean;
  /**
   * Hands run `runId` a person's message: it joins the run's conversation at its next model step, is
   * recorded in the journal there (a resume replays it at the same step, once) and shown as a
   * `run-message` event. A message whose id the run has had already is ignored. False when no such run
   * goes on here.
   */
  sendMessage(runId: string, message: RunMessage): boolean;
}

/** A person's message to a running run, or a background run's envelope delivered to its parent. */
export interface RunMessage {
  /** Unique per message: the same message handed twice joins once. */
  id: string;
  text: string;
  /** Set for a background run's envelope (its text is the envelope as the parent's model sees it). */
  background?: BackgroundDelivery;
}

/** Where a run an earlier attempt began goes on. */
export interface ResumePoint {
  /** The number after the last event the earlier attempt stored. */
  next: number;
  /**
   * The number each tool call's stored `tool-call` and `tool-result` event (and the stored end) has, by
   * replay key: replayed, they repeat it even after the run went on (the calls of one step replay side
   * by side with one made anew), so the store keeps one of each.
   */
  stored: ReadonlyMap<string, number>;
  /** When it first started (its stored `run-start`): its time limit counts from then. */
  startedAt?: number | undefined;
}

/** Each run's resume point, from a tree's stored events (in any order). */
export function resumePointsOf(events: Iterable<CadreEvent>): Map<string, ResumePoint> {
  const points = new Map<string, { next: number; stored: Map<string, number>; startedAt?: number }>();
  for (const event of events) {
    let point = points.get(event.runId);
    if (!point) {
      point = { next: 0, stored: new Map() };
      points.set(event.runId, point);
    }
    point.next = Math.max(point.next, event.seq + 1);
    if (event.type === 'run-start' && (point.startedAt === undefined || event.time < point.startedAt))
      point.startedAt = event.time;
    const key = replayKey(event);
    if (key === undefined) continue;
    const seq = point.stored.get(key);
    if (seq === undefined || event.seq < seq) point.stored.set(key, event.seq);
  }
  return points;
}

/**
 * Numbers one run's events. A run going on from an earlier attempt replays what its journal holds: the
 * replay's events repeat the stored ones under the same numbers (the store keeps one of each); once the
 * run does something new, its events continue after the last the earlier attempt stored.
 */
export class EventNumbering {
  #seq = 0;
  /** Set while the run still replays: the number after the earlier attempt's last stored event. */
  #resumeAt: number | undefined;
  #stored: ReadonlyMap<string, number> | undefined;

  constructor(point?: ResumePoint) {
    this.#resumeAt = point?.next;
    this.#stored = point?.stored;
  }

  /**
   * The run goes beyond what was stored (a step made anew, or an end the earlier attempt never reached):
   * its next events are numbered after everything stored (once). Returns whether it had been replaying.
   */
  goLive(): boolean {
    if (this.#resumeAt === undefined) return false;
    this.#seq = Math.max(this.#seq, this.#resumeAt);
    this.#resumeAt = undefined;
    return true;
  }

  /** The number of the run's next event. */
  next(body: EventBody): number {
    const key = replayKey(body);
    const stored = this.#stored && key !== undefined ? this.#stored.get(key) : undefined;
    // A replayed tool event or end repeats its stored number; while the run still replays, the numbering
    // keeps pace with it, so what follows repeats its stored number too. One the earlier attempt never
    // stored (its write lost, or an end it never reached) is new: numbered after everything stored.
    if (stored !== undefined) {
      if (this.#resumeAt !== undefined) this.#seq = Math.max(this.#seq, stored + 1);
      return stored;
    }
    if (key !== undefined) this.goLive();
    return this.#seq++;
  }
}

/**
 * What identifies an event a replay repeats by its stored number rather than its place: a tool call's
 * `tool-call` and `tool-result` (parallel calls replay in another order), and the run's end.
 */
export function replayKey(body: EventBody): string | undefined {
  switch (body.type) {
    case 'tool-call':
    case 'tool-result':
      return `${body.type}:${body.toolCallId}`;
    case 'run-error':
    case 'run-finish':
      return `${body.type}:`;
    default:
      return undefined;
  }
}
