import type { CadreEvent } from '../core/events.ts';
import { RunProjection } from '../core/run-view.ts';
import type { Store } from '../store/store.ts';
import type { LiveRuns } from './live-runs.ts';
import type { Pricing } from './pricing.ts';
import { claimResume } from './resume-claim.ts';
import { answerRecorder, storeAnswer } from './stored-answers.ts';
import type { ResumeClaim, StartedTree, TreeExecutor, TreeStart } from './tree-executor.ts';
import { runRequestOf } from './tree-executor.ts';
import { EmbeddedTreeRecord } from './tree-records.ts';
import { endStopRelay, relayStops, stopTree, treeEvents } from './trees.ts';

/**
 * Trees run in this process (the embedded mode): each is registered with the live trees (so any request
 * can follow or stop it), its caller's signal is linked, every event is observed, its journal is begun
 * with the root's run id, and once it has ended its events are stored before the slot is freed. The
 * tree's events are folded once, here where they happen: into its answer (AnswerRecorder), stored in the
 * session its spec names before `finish`, and the runtime reads its outcome's tree from the same fold.
 * Stops asked from other processes reach it through the store (`relayStops`); resume claims are lock
 * files in CADRE_HOME.
 */
export class InProcessTrees implements TreeExecutor {
  #parts: InProcessTreeParts;

  constructor(parts: InProcessTreeParts) {
    this.#parts = parts;
  }

  async start<Result>(start: TreeStart<Result>): Promise<StartedTree<Result>> {
    const parts = this.#parts;
    const { slot, userId } = start;
    const signal = start.signal ? AbortSignal.any([start.signal, slot.signal]) : slot.signal;
    const { id: journalId, spec } = start.journal;
    const journal = start.journal.resume
      ? await parts.store.journal.open(journalId).catch((error: unknown) => {
          slot.end();
          throw error;
        })
      : parts.store.journal.create(journalId);
    let started: (rootRunId: string) => void = () => {};
    const rootStarted = new Promise<string>((resolve) => {
      started = resolve;
    });
    // The one fold of the tree's events: its answer's, when it answers in a session.
    const recorder = spec.sessionId ? answerRecorder(spec, journalId, parts.pricing) : undefined;
    const projection = recorder?.projection ?? new RunProjection();
    // The root's end is shown to followers once the answer is stored and the result made (as a queued
    // tree's is): whoever sees the tree end reads its answer in the session.
    let rootEnd: CadreEvent | undefined;
    const onEvent = (event: CadreEvent) => {
      const isRootStart = event.type === 'run-start' && event.parentRunId === null;
      if (isRootStart) void parts.store.journal.begin(journalId, event.runId, userId, spec);
      if (recorder) recorder.event(event);
      else projection.apply(event);
      start.onEvent?.(event);
      if (event.type === 'run-finish' && event.parentRunId === null) rootEnd = event;
      else slot.observe(event);
      if (isRootStart) started(event.runId);
    };
    relayStops(parts);
    const record = new EmbeddedTreeRecord(journal, parts.store.runs);
    slot.steer({
      stopRun: (runId, reason) => record.stopRun(runId, reason),
      sendMessage: (runId, message) => record.sendMessage(runId, message),
    });
    const ran = (async () =>
      start.runtime.run({
        ...runRequestOf(spec),
        userId,
        approver: start.approver,
        rootLimits: start.rootLimits,
        signal,
        onEvent,
        record,
        projection,
      }))();
    const result = ran
      .then(async (outcome) => {
        if (recorder) await storeAnswer(parts.store.sessions, userId, spec, outcome.envelope, recorder);
        return start.finish(outcome);
      })
      .finally(async () => {
        await parts.store.runs.flush();
        if (rootEnd) slot.observe(rootEnd);
        slot.end();
        endStopRelay(parts);
      });
    // Callers that only stream may never await the result; its failure is theirs to see in the events.
    result.catch(() => {});
    const rootRunId = await Promise.race([rootStarted, ran.then((outcome) => outcome.envelope.runId)]);
    return {
      rootRunId,
      events: (options) => treeEvents(parts, userId, rootRunId, options),
      result,
      cancel: (reason) => stopTree(parts, userId, rootRunId, reason),
      projection,
    };
  }

  async claimResume(journalId: string): Promise<ResumeClaim> {
    return claimResume(this.#parts.home, journalId);
  }
}

/** What running trees in this process needs: the store, the live trees, CADRE_HOME, the configured prices. */
export interface InProcessTreeParts {
  store: Pick<Store, 'runs' | 'journal' | 'sessions'>;
  live: LiveRuns;
  home: string;
  /** The configured prices of models: a stored answer says what it cost. */
  pricing?: Pricing | undefined;
}
