import { describe, expect, it } from 'vitest';
import type { CadreEvent } from '../../src/core/events.ts';
import type { ResumeSpec } from '../../src/store/journal-store.ts';
import type { Store } from '../../src/store/store.ts';

const spec = (task: string): ResumeSpec => ({ agent: 'main', task, history: [], inputs: {} });

/** A finished root run of alice's, as its events (`interrupted`: closed by the sweep, resumable). */
function finishedRun(runId: string, status: 'ok' | 'interrupted' = 'ok'): CadreEvent[] {
  const base = { rootRunId: runId, runId, parentRunId: null, depth: 0, agent: 'main', time: 1 };
  const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
  return [
    { ...base, seq: 0, type: 'run-start', task: 't', model: 'm:x', userId: 'alice' },
    { ...base, seq: 1, type: 'run-finish', status, summary: 's', usage, subtreeUsage: usage },
  ];
}

/**
 * What every backend's `JournalStore` must do, part of the store contract (`describeStoreContract`).
 * `open` gives a fresh, empty store.
 */
export function describeJournalStoreContract(open: () => Promise<Store>): void {
  describe('run journal', () => {
    it('gives a later attempt every entry an earlier one put, in a new journal or an opened one', async () => {
      const store = await open();
      const first = store.journal.create('jrn_a');
      expect(first.get('r', 'model-step', '0')).toBeUndefined();
      await first.put('r', 'model-step', '0', { parts: [{ type: 'text-delta', delta: 'hi' }] });
      await first.put(
        'r/call_1',
        'tool-result',
        'call_2',
        { ok: true, output: { page: 'x'.repeat(5000) } },
        'soon',
      );
      await first.put('r', 'tool-result', 'call_3', { ok: false, error: 'refused' }, 'soon');
      expect(first.entries()).toBe(3);
      await store.runs.secure();

      const again = await store.journal.open('jrn_a');
      expect(again.entries()).toBe(3);
      expect(again.get('r', 'model-step', '0')).toEqual({ parts: [{ type: 'text-delta', delta: 'hi' }] });
      expect(again.get('r/call_1', 'tool-result', 'call_2')).toEqual({
        ok: true,
        output: { page: 'x'.repeat(5000) },
      });
      expect(again.get('r', 'tool-result', 'call_3')).toEqual({ ok: false, error: 'refused' });
      // Another journal's keys never leak in.
      expect((await store.journal.open('jrn_b')).get('r', 'model-step', '0')).toBeUndefined();
      await store.close();
    });

    it('finds a journal by any attempt, only for the user it ran for, and each attempt once', async () => {
      const store = await open();
      await store.journal.begin('jrn_a', 'run_1', 'alice', spec('first'));
      await store.journal.begin('jrn_a', 'run_2', 'alice', spec('second'));
      // Recording an attempt twice (a spool applied again) changes nothing.
      await store.journal.begin('jrn_a', 'run_1', 'alice', spec('ignored'));
      const found = await store.journal.find('alice', 'run_2');
      expect(found).toEqual({
        journalId: 'jrn_a',
        userId: 'alice',
        spec: spec('first'),
        attempts: ['run_1', 'run_2'],
      });
      expect(await store.journal.find('alice', 'run_1')).toEqual(found);
      expect(await store.journal.find('bob', 'run_2')).toBeUndefined();
      expect(await store.journal.find('alice', 'run_missing')).toBeUndefined();
      await store.close();
    });

    it('lists an attempt just begun among the attempts, so resuming sees the latest one', async () => {
      const store = await open();
      await store.journal.begin('jrn_a', 'run_1', 'alice', spec('first'));
      await store.runs.flush();
      // A resume of run_1 has started run_2; a second resume of run_1 must see it, not run_1 again.
      await store.journal.begin('jrn_a', 'run_2', 'alice', spec('first'));
      expect((await store.journal.find('alice', 'run_1'))?.attempts).toEqual(['run_1', 'run_2']);
      await store.close();
    });

    it('goes with the last run tree that used it: removing a run removes what its model saw', async () => {
      const store = await open();
      for (const runId of ['run_1', 'run_2']) {
        for (const event of finishedRun(runId)) store.runs.record(event);
        await store.journal.begin('jrn_a', runId, 'alice', spec('t'));
      }
      await store.journal.create('jrn_a').put('r', 'tool-result', 'call_1', { ok: true, output: 'secret' });
      // bob cannot remove alice's run, nor its journal.
      expect(await store.runs.removeTree('bob', 'run_1')).toBe(false);
      expect(await store.runs.removeTree('alice', 'run_1')).toBe(true);
      // The resumed attempt still has its journal.
      expect(await store.journal.find('alice', 'run_1')).toBeUndefined();
      expect((await store.journal.find('alice', 'run_2'))?.attempts).toEqual(['run_2']);
      expect((await store.journal.open('jrn_a')).entries()).toBe(1);
      expect(await store.runs.prune('alice', { before: Date.now() + 1_000 })).toBe(1);
      expect(await store.journal.find('alice', 'run_2')).toBeUndefined();
      expect((await store.journal.open('jrn_a')).entries()).toBe(0);
      await store.close();
    });

    it('is pruned with finished trees, but an interrupted tree stays until a later attempt of it has finished', async () => {
      const store = await open();
      // done: finished, no journal. waiting: interrupted, nothing resumed it yet. first → second:
      // interrupted, then resumed to the end.
      for (const [runId, status] of [
        ['done', 'ok'],
        ['waiting', 'interrupted'],
        ['first', 'interrupted'],
        ['second', 'ok'],
      ] as const)
        for (const event of finishedRun(runId, status)) store.runs.record(event);
      await store.journal.begin('jrn_w', 'waiting', 'alice', spec('t'));
      await store.journal.begin('jrn_f', 'first', 'alice', spec('t'));
      await store.journal.begin('jrn_f', 'second', 'alice', spec('t'));
      await store.journal.create('jrn_w').put('r', 'tool-result', 'call_1', { ok: true, output: 'kept' });
      await store.runs.flush();
      expect(await store.runs.prune('bob', { before: Date.now() + 1_000 })).toBe(0);
      expect(await store.runs.prune('alice', { before: Date.now() + 1_000 })).toBe(3);
      expect((await store.runs.listRuns('alice')).map((run) => [run.id, run.status])).toEqual([
        ['waiting', 'interrupted'],
      ]);
      // A resume starting now finds it whole.
      expect((await store.journal.find('alice', 'waiting'))?.attempts).toEqual(['waiting']);
      expect((await store.journal.open('jrn_w')).entries()).toBe(1);
      expect(await store.journal.find('alice', 'first')).toBeUndefined();
      await store.close();
    });
  });
}
