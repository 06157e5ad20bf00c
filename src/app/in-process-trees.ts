import type { CadreEvent } from '../core/events.ts';
import type { Store } from '../store/store.ts';
import type { LiveRuns } from './live-runs.ts';
import { claimResume } from './resume-claim.ts';
import type { ResumeClaim, TreeExecutor, TreeStart } from './tree-executor.ts';
import { runRequestOf } from './tree-executor.ts';
import type { TreeHandle } from './tree-handle.ts';
import { EmbeddedTreeRecord } from './tree-records.ts';
import { endStopRelay, relayStops, stopTree, treeEvents } from './trees.ts';

/**
 * Trees run in this process (the embedded mode): each is registered with the live trees (so any request
 * can follow or stop it), its caller's signal is linked, every event is observed, its journal is begun
 * with the root's run id, and once it has ended its events are stored before the slot is freed. Stops
 * asked from other processes reach it through the store (`relayStops`); resume claims are lock files in
 * CADRE_HOME.
 */
export class InProcessTrees implements TreeExecutor {
  #parts: { store: Pick<Store, 'runs' | 'journal'>; live: LiveRuns; home: string };

  constructor(parts: { store: Pick<Store, 'runs' | 'journal'>; live: LiveRuns; home: string }) {
    this.#parts = parts;
  }

  async start<Result>(start: TreeStart<Result>): Promise<TreeHandle<Result>> {
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
    const onEvent = (event: CadreEvent) => {
      const isRootStart = event.type === 'run-start' && event.parentRunId === null;
      if (isRootStart) void parts.store.journal.begin(journalId, event.runId, userId, spec);
      start.onEvent?.(event);
      slot.observe(event);
      if (isRootStart) started(event.runId);
    };
    relayStops(parts);
    const record = new EmbeddedTreeRecord(journal);
    slot.steer((runId, reason) => record.stopRun(runId, reason));
    const ran = (async () =>
      start.runtime.run({
        ...runRequestOf(spec),
        userId,
        approver: start.approver,
        rootLimits: start.rootLimits,
        signal,
        onEvent,
        record,
      }))();
    const result = ran
      .then((outcome) => start.finish(outcome))
      .finally(async () => {
        await parts.store.runs.flush();
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
    };
  }

  async claimResume(journalId: string): Promise<ResumeClaim> {
    return claimResume(this.#parts.home, journalId);
  }
}
