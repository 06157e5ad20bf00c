import { describe, expect, it } from 'vitest';
import type { CadreEvent, RunPartData, RunView } from './protocol.ts';
import { foldRun, mergeRun } from './run-fold.ts';

/** The page's fold of one run is the server's (`foldRun`, src/core/run-view.ts). */
const foldEvent = (previous: RunView | undefined, next: CadreEvent) => foldRun(previous, next);

import { RunStore } from './run-store.ts';

const base = { runId: 'child', parentRunId: 'root', depth: 1, agent: 'math' };
let seq = 0;
const event = (body: Record<string, unknown>, run: Record<string, unknown> = base): CadreEvent =>
  ({ ...run, seq: seq++, time: 1000 + seq, ...body }) as CadreEvent;

const header = (fields: Partial<RunPartData> = {}): RunPartData => ({
  runId: 'child',
  parentRunId: 'root',
  rootRunId: 'root',
  depth: 1,
  agent: 'math',
  task: 'Compute 17 * 23.',
  model: 'compatible:fixture',
  status: 'running',
  startedAt: 1000,
  parentToolCallId: 'call-1',
  ...fields,
});

describe('folding run events', () => {
  it('builds text, tool calls with their results, the plan and step usage from deltas', () => {
    const events = [
      event({ type: 'run-start', task: 'Compute 17 * 23.', model: 'm' }),
      event({ type: 'tool-call', toolCallId: 't1', name: 'calculate', input: { expression: '17*23' } }),
      event({ type: 'tool-result', toolCallId: 't1', name: 'calculate', ok: true, output: '391', ms: 3 }),
      event({ type: 'text-delta', delta: '17 * 23 ' }),
      event({ type: 'text-delta', delta: '= 391' }),
      event({ type: 'plan-update', steps: [{ title: 'Multiply', status: 'done' }] }),
      event({
        type: 'step-finish',
        step: 0,
        finishReason: 'stop',
        usage: { inputTokens: 5, outputTokens: 2, totalTokens: 7 },
      }),
    ];
    const live = events.reduce<RunView | undefined>(foldEvent, undefined)!;
    expect(live.text).toBe('17 * 23 = 391');
    expect(live.toolCalls).toEqual([
      { id: 't1', name: 'calculate', input: { expression: '17*23' }, ok: true, output: '391', ms: 3 },
    ]);
    expect(live.plan).toEqual([{ title: 'Multiply', status: 'done' }]);
    expect(live.stepUsage.totalTokens).toBe(7);
    expect(live.status).toBe('running');
  });

  it('marks refused calls as failed before any result', () => {
    const live = foldEvent(
      undefined,
      event({ type: 'tool-call', toolCallId: 't', name: 'x', input: {}, refused: 'unknown tool' }),
    );
    expect(live.toolCalls[0]).toMatchObject({ ok: false, refused: 'unknown tool' });
  });

  it('a stored header alone shows its stored history; live deltas win over it while streaming', () => {
    const stored = header({
      status: 'ok',
      text: 'stored text',
      toolCalls: [{ id: 't', name: 'calculate', input: {} }],
      summary: 'done',
    });
    expect(mergeRun(stored, undefined)).toMatchObject({ text: 'stored text', summary: 'done', status: 'ok' });
    const live = foldEvent(undefined, event({ type: 'text-delta', delta: 'live' }));
    expect(mergeRun(header(), live)).toMatchObject({ text: 'live', status: 'running' });
  });

  it('shows the outcome from the last event before the closing header arrives', () => {
    let live = foldEvent(undefined, event({ type: 'text-delta', delta: 'partial answer' }));
    live = foldEvent(
      live,
      event({ type: 'run-error', status: 'cancelled', message: 'Cancelled by the person.' }),
    );
    expect(mergeRun(header(), live)).toMatchObject({
      status: 'cancelled',
      error: 'Cancelled by the person.',
    });
    // The closing header wins once it comes.
    expect(mergeRun(header({ status: 'timeout', error: 'took too long' }), live)).toMatchObject({
      status: 'timeout',
    });
  });

  it('derives a summary the wire left out from the end of the streamed text', () => {
    const live = foldEvent(
      undefined,
      event({ type: 'text-delta', delta: 'Thinking.\n\nThe answer is 391.\n' }),
    );
    const closing = { ...header({ status: 'ok' }), summaryChars: 18 } as RunPartData;
    expect(mergeRun(closing, live)?.summary).toBe('The answer is 391.');
  });
});

describe('the run store', () => {
  it('notifies only the changed runs, once per flush, and keeps views stable between changes', () => {
    const pending: Array<() => void> = [];
    const store = new RunStore((flush) => pending.push(flush));
    store.putHeader(header());
    store.putHeader(header({ runId: 'other', parentToolCallId: 'call-2', agent: 'research' }));
    for (const flush of pending.splice(0)) flush();
    const calls = { child: 0, other: 0, root: 0 };
    store.subscribe('child', () => calls.child++);
    store.subscribe('other', () => calls.other++);
    store.subscribe('root', () => calls.root++);

    const before = store.get('other');
    for (let index = 0; index < 50; index++) store.apply(event({ type: 'text-delta', delta: 'x' }));
    expect(pending).toHaveLength(1);
    for (const flush of pending.splice(0)) flush();
    expect(calls).toEqual({ child: 1, other: 0, root: 0 });
    expect(store.get('other')).toBe(before);
    expect(store.get('child')?.text).toBe('x'.repeat(50));
    expect(store.children('root')).toEqual(['child', 'other']);
    expect(store.runForToolCall('call-2')).toBe('other');
  });

  it('lists a tree depth-first and links runs announced only by events', () => {
    const store = new RunStore(() => {});
    store.putHeader(header({ runId: 'root', parentRunId: null, depth: 0, agent: 'main' }));
    store.apply(event({ type: 'run-start', task: 't', model: 'm' }));
    store.apply(
      event(
        { type: 'run-start', task: 'deeper', model: 'm' },
        { runId: 'grandchild', parentRunId: 'child', depth: 2, agent: 'research' },
      ),
    );
    expect(store.tree('root').map((run) => run.runId)).toEqual(['root', 'child', 'grandchild']);
  });

  it('folds 50 runs × 200 events in linear time', () => {
    const store = new RunStore(() => {});
    const started = performance.now();
    for (let run = 0; run < 50; run++) {
      const identity = { runId: `r${run}`, parentRunId: 'root', depth: 1, agent: 'research' };
      store.apply(event({ type: 'run-start', task: `task ${run}`, model: 'm' }, identity));
      for (let index = 0; index < 199; index++)
        store.apply(event({ type: 'text-delta', delta: 'word ' }, identity));
    }
    const elapsed = performance.now() - started;
    expect(store.children('root')).toHaveLength(50);
    expect(store.get('r49')?.text.length).toBe(199 * 5);
    expect(elapsed).toBeLessThan(500);
  });
});

describe('approvals in the run store', () => {
  it('lists a call waiting for the person until its result arrives', () => {
    const store = new RunStore(() => {});
    store.apply(event({ type: 'tool-call', toolCallId: 'w', name: 'write_file', input: { path: 'a' } }));
    store.apply(
      event({
        type: 'approval-request',
        approvalId: 'apr1',
        toolCallId: 'w',
        name: 'write_file',
        input: { path: 'a' },
        path: [],
        expiresAt: 9,
      }),
    );
    expect(store.approvals()).toEqual([
      expect.objectContaining({ approvalId: 'apr1', agent: 'math', name: 'write_file' }),
    ]);
    expect(store.get('child')?.toolCalls[0]?.approval).toEqual({ approvalId: 'apr1' });
    store.apply(
      event({
        type: 'approval-result',
        approvalId: 'apr1',
        toolCallId: 'w',
        name: 'write_file',
        approved: false,
        by: 'person',
        reason: 'no',
      }),
    );
    expect(store.approvals()).toEqual([]);
    expect(store.get('child')?.toolCalls[0]?.approval).toMatchObject({ approved: false, reason: 'no' });
  });
});

describe('cards the person opened', () => {
  it('opens a run with every run above it but the root (the answer), and notifies only those', () => {
    const flushes: Array<() => void> = [];
    const store = new RunStore((flush) => flushes.push(flush));
    const grandchild = { runId: 'grandchild', parentRunId: 'child', depth: 2, agent: 'math' };
    store.putHeader({ ...header(), runId: 'root', parentRunId: null, depth: 0, agent: 'main' });
    store.putHeader(header());
    store.apply(event({ type: 'run-start', task: 'Add.', model: 'm' }, grandchild));
    const heard: string[] = [];
    for (const id of ['root', 'child', 'grandchild']) store.subscribe(` open ${id}`, () => heard.push(id));
    store.reveal('grandchild');
    store.flush();
    expect(['root', 'child', 'grandchild'].map((id) => store.isOpen(id))).toEqual([false, true, true]);
    expect(heard.sort()).toEqual(['child', 'grandchild']);
    store.setOpen('child', false);
    expect(store.isOpen('child')).toBe(false);
  });

  it('counts a run’s model steps, live from step-finish and stored in its header', () => {
    const live = new RunStore(() => {});
    live.apply(event({ type: 'run-start', task: 'Add.', model: 'm' }));
    for (const _ of [1, 2])
      live.apply(event({ type: 'step-finish', usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } }));
    expect(live.get('child')?.steps).toBe(2);
    const stored = new RunStore(() => {});
    stored.putHeader(header({ status: 'ok', steps: 3 }));
    expect(stored.get('child')?.steps).toBe(3);
  });

  it('folds an event it has seen once only, so a stream attached again does not list a tool call twice', () => {
    const store = new RunStore((flush) => flush());
    const events = [
      event({ type: 'run-start', task: 'Compute 17 * 23.', model: 'm' }),
      event({ type: 'tool-call', toolCallId: 't9', name: 'calculate', input: { expression: '17*23' } }),
    ];
    for (const one of events) store.apply(one);
    // The same events again (a resumed stream replaying from its start), then one new.
    for (const one of events) store.apply(one);
    store.apply(
      event({ type: 'tool-result', toolCallId: 't9', name: 'calculate', ok: true, output: '391', ms: 3 }),
    );
    expect(store.get('child')?.toolCalls.map((call) => [call.id, call.ok])).toEqual([['t9', true]]);
  });
});

describe('runs in the background', () => {
  it('counts the runs running in the background, live or from stored headers, until each ends', () => {
    const store = new RunStore((flush) => flush());
    let notified = 0;
    store.subscribe(' background', () => notified++);
    const scout = { runId: 'scout', parentRunId: 'root', depth: 1, agent: 'scout' };
    store.apply(event({ type: 'run-start', task: 'Look', model: 'm', background: true }, scout));
    store.apply(event({ type: 'run-start', task: 'Count', model: 'm' }));
    expect(store.backgroundRunning()).toBe(1);
    store.putHeader(header({ runId: 'other', parentToolCallId: 'call-2', background: true }));
    expect(store.backgroundRunning()).toBe(2);
    store.apply(event({ type: 'text-delta', delta: 'still looking' }, scout));
    expect(notified).toBe(2);
    store.apply(
      event(
        {
          type: 'run-finish',
          status: 'ok',
          summary: 'Found',
          usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
          subtreeUsage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
        },
        scout,
      ),
    );
    store.putHeader(
      header({
        runId: 'other',
        parentToolCallId: 'call-2',
        background: true,
        status: 'cancelled',
        endedAt: 2000,
      }),
    );
    expect(store.backgroundRunning()).toBe(0);
    expect(notified).toBe(4);
  });

  it('knows when the main agent has answered and waits only for its background runs, until something joins it', () => {
    const store = new RunStore((flush) => flush());
    const main = { runId: 'root', parentRunId: null, rootRunId: 'root', depth: 0, agent: 'main' };
    const scout = { runId: 'scout', parentRunId: 'root', rootRunId: 'root', depth: 1, agent: 'scout' };
    const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
    const step = (n: number, finishReason: string) =>
      event({ type: 'step-finish', step: n, finishReason, usage }, main);
    store.apply(event({ type: 'run-start', task: 'Ask', model: 'm' }, main));
    store.apply(step(0, 'tool-calls'));
    store.apply(event({ type: 'run-start', task: 'Look', model: 'm', background: true }, scout));
    // Main delegated and goes on: it has not answered yet.
    expect(store.waitsForBackground('root')).toBe(false);
    store.apply(step(1, 'stop'));
    expect(store.waitsForBackground('root')).toBe(true);
    // The same step replayed (a stream attached again) changes nothing.
    store.apply(step(1, 'stop'));
    expect(store.waitsForBackground('root')).toBe(true);
    // A person's message joins: main works on it, then answers again and waits.
    store.apply(event({ type: 'run-message', messageId: 'm1', text: 'Done yet?', step: 2 }, main));
    expect(store.waitsForBackground('root')).toBe(false);
    store.apply(step(2, 'stop'));
    expect(store.waitsForBackground('root')).toBe(true);
    // Scout ends: nothing left to wait for in the background.
    store.apply(
      event({ type: 'run-finish', status: 'ok', summary: 'Found', usage, subtreeUsage: usage }, scout),
    );
    expect(store.waitsForBackground('root')).toBe(false);
    expect(store.waitsForBackground('other')).toBe(false);
  });
});
