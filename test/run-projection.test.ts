import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AnswerChunks } from '../src/app/answer/answer-chunks.ts';
import type { RunPartData } from '../src/app/answer/protocol.ts';
import { AnswerRecorder } from '../src/app/answer/stored-answer.ts';
import type { CadreEvent } from '../src/core/events.ts';
import { foldRun, RunProjection, type RunView } from '../src/core/run-view.ts';
import { mergeRun, runTokens } from '../web/src/runs/run-fold.ts';

/**
 * Event sequences recorded from real runs of the runtime (a scripted model; test/fixtures/recorded-folds),
 * each with what the folds that came before the projector made of it: the run tree (RunTreeBuilder), the
 * chat stream's chunks (ChatStreamTranslator), the stored answer (AnswerMessageBuilder's own fold of
 * those chunks) and the page's run views (web's foldEvent + mergeRun). The projector, and everything
 * now rendered from it, must give the same pictures. `resume` tells a child's committed events again (a
 * run going on from its journal) as the runtime does; the old folds were given what the store keeps of
 * it (each event once).
 */
const CASES = ['delegation', 'parallel', 'cancelled', 'approvals', 'resume'] as const;
const pricing = { 'scripted:test': { inputPerMillion: 1, outputPerMillion: 2 } };

interface Recorded {
  events: CadreEvent[];
  old: {
    tree: unknown;
    chunks: Array<{ type: string; id?: string; data?: unknown }>;
    message: { parts: Array<{ type: string; data?: RunPartData }> };
    views: Record<string, Record<string, unknown>>;
  };
}

const recorded = (name: string): Recorded =>
  JSON.parse(readFileSync(new URL(`fixtures/recorded-folds/${name}.json`, import.meta.url), 'utf8'));

describe.each(CASES)('the projector over a recorded tree (%s)', (name) => {
  const { events, old } = recorded(name);

  it('gives the run tree JSON the old RunTreeBuilder gave', () => {
    const projection = new RunProjection();
    for (const event of events) projection.apply(event);
    expect(projection.tree()).toEqual(old.tree);
  });

  it('is translated into the very chunks the old translator sent, replays left out', () => {
    const answer = new AnswerChunks(`msg_${name}`, `ses_${name}`, pricing);
    const chunks = [
      ...answer.start(),
      ...events.flatMap((event) => answer.event(event)),
      ...answer.end({ status: 'interrupted' }),
    ];
    expect(chunks).toEqual(old.chunks);
  });

  it('stores the answer the old fold of the chunks stored, its runs folded once', () => {
    const recorder = new AnswerRecorder(`msg_${name}`, `ses_${name}`, pricing);
    for (const event of events) recorder.event(event);
    const message = recorder.message({ status: 'interrupted' });
    // Each run's stored calls extend the old ones, renaming nothing: the root's calls were folded from
    // the chunks (no `ms`, no `refused`, a delegation's envelope as the wire sent it, without its summary);
    // now every run's calls come from its view alike, and a call that waited has its approval.
    const withoutCalls = (parts: Array<{ type: string; data?: unknown }>) =>
      parts.map((part) =>
        part.type === 'data-run' ? { ...part, data: { ...(part.data as object), toolCalls: [] } } : part,
      );
    expect({ ...message, parts: withoutCalls(message.parts) }).toEqual({
      ...old.message,
      parts: withoutCalls(old.message.parts),
    });
    message.parts.forEach((part, index) => {
      if (part.type !== 'data-run') return;
      const before = (old.message.parts[index]?.data?.toolCalls ?? []) as Array<Record<string, unknown>>;
      const after = (part.data.toolCalls ?? []) as Array<Record<string, unknown>>;
      expect(after.map((call) => call.id)).toEqual(before.map((call) => call.id));
      after.forEach((call, at) => {
        const had = before[at]!;
        const kept = Object.fromEntries(Object.keys(had).map((key) => [key, call[key]]));
        if (part.data.parentRunId === null && had.output && typeof kept.output === 'object') {
          const { summary: _summary, ...envelope } = kept.output as Record<string, unknown>;
          kept.output = envelope;
        }
        expect(kept).toEqual(had);
        if (call.approval) expect(name).toBe('approvals');
      });
    });
    if (name === 'approvals') {
      const calls = message.parts.flatMap((part) =>
        part.type === 'data-run' ? (part.data.toolCalls ?? []) : [],
      );
      expect(calls.find((call) => call.name === 'deploy')?.approval).toMatchObject({
        approved: true,
        by: 'person',
      });
    }
  });

  it("gives the page's run views the old page fold gave (the page folds with foldRun)", () => {
    const answer = new AnswerChunks(`msg_${name}`, `ses_${name}`, pricing);
    const headers = new Map<string, RunPartData>();
    for (const event of events)
      for (const chunk of answer.event(event))
        if (chunk.type === 'data-run' && chunk.id) headers.set(chunk.id, chunk.data);
    const live = new Map<string, RunView>();
    for (const event of events) {
      const parent = event.parentRunId ? live.get(event.parentRunId) : undefined;
      live.set(event.runId, foldRun(live.get(event.runId), event, parent));
    }
    const picture = (view: Record<string, unknown>) => {
      const {
        text,
        reasoning,
        toolCalls,
        status,
        summary,
        error,
        plan,
        steps,
        usage,
        subtreeUsage,
        endedAt,
      } = view;
      // The page's calls now have the diff an edit reported, as the run tree's always had (an extension).
      const calls = (toolCalls as Array<Record<string, unknown>>).map(({ diff: _diff, ...call }) => call);
      return {
        text,
        reasoning,
        calls,
        status,
        summary,
        error,
        plan,
        steps,
        usage,
        subtreeUsage,
        endedAt,
      };
    };
    expect(Object.keys(old.views).sort()).toEqual([...live.keys()].sort());
    for (const [runId, before] of Object.entries(old.views)) {
      const view = mergeRun(headers.get(runId), live.get(runId))!;
      expect(picture(view as never), runId).toEqual(picture(before));
      expect(runTokens(view)).toBe(
        (before.usage as { totalTokens: number } | undefined)?.totalTokens ?? before.liveTokens,
      );
      for (const field of [
        'runId',
        'parentRunId',
        'rootRunId',
        'depth',
        'agent',
        'task',
        'model',
        'startedAt',
      ])
        expect(view[field as keyof RunView], field).toEqual(before[field]);
    }
  });
});

describe('the projector', () => {
  const base = { runId: 'r', parentRunId: null, rootRunId: 'r', depth: 0, agent: 'main', time: 1 };
  const start: CadreEvent = { ...base, seq: 0, type: 'run-start', task: 't', model: 'm', userId: 'u' };
  const delta: CadreEvent = { ...base, seq: 1, type: 'text-delta', delta: 'hi' };

  it('foldRun hands back the same view for a replayed event and a new one for each change (the page compares by identity)', () => {
    const started = foldRun(undefined, start);
    const written = foldRun(started, delta);
    expect(written).not.toBe(started);
    expect(started.text).toBe('');
    expect(foldRun(written, delta)).toBe(written);
    expect(written.text).toBe('hi');
  });

  it('a projection folds in place and tells a replay apart (nothing changes)', () => {
    const projection = new RunProjection();
    projection.apply(start);
    expect(projection.apply(delta)?.text).toBe('hi');
    expect(projection.apply(delta)).toBeUndefined();
    expect(projection.get('r')?.text).toBe('hi');
    expect(projection.tree()?.summary).toBe('');
  });
});
