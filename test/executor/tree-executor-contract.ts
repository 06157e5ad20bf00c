import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { LiveRuns } from '../../src/app/live-runs.ts';
import type { TreeExecutor, TreeStart } from '../../src/app/tree-executor.ts';
import { reserveTree } from '../../src/app/trees.ts';
import type { CadreEvent } from '../../src/core/events.ts';
import { EventBus } from '../../src/core/events.ts';
import type { RunOutcome } from '../../src/core/runtime.ts';
import { Runtime } from '../../src/core/runtime.ts';
import { ToolRegistry } from '../../src/core/tool-registry.ts';
import { ScriptedModel, type ScriptedRequest } from '../../src/models/scripted-model.ts';
import type { ResumeSpec } from '../../src/store/journal-store.ts';
import type { Store } from '../../src/store/store.ts';
import { agent, slow } from '../helpers/runtime-setup.ts';

/**
 * The contract every `TreeExecutor` holds (in this process, as queued jobs): the same description of a
 * tree starts it, and the handle, the events, the end, the stops and the slot behave the same. Run by
 * test/executor/in-process-trees.test.ts (SQLite) and test/postgres/queued-trees.test.ts (PostgreSQL,
 * a worker in the same process taking the jobs).
 */
export interface ExecutorHarness {
  executor: TreeExecutor;
  store: Pick<Store, 'runs' | 'journal' | 'sessions'>;
  live: LiveRuns;
  close(): Promise<void>;
}

/**
 * The runtime every case runs on: `main` answers a task by its first word: `delegate` asks the helper
 * sub-agent, `wait` calls a tool that waits until it is stopped, anything else is answered at once.
 * Its events go to the store, as Cadre's bus sends them there.
 */
export function contractRuntime(store: Pick<Store, 'runs'>): Runtime {
  const bus = new EventBus();
  bus.subscribe((event) => store.runs.record(event));
  const script = (request: ScriptedRequest) => {
    const who = request.system.match(/I am (\w+)\./)?.[1];
    if (who === 'helper') return { text: `helper found: ${request.lastUserText}` };
    const task = request.lastUserText;
    if (request.toolResults.length)
      return { text: `main says: ${JSON.stringify(request.toolResults[0]?.output)}` };
    if (task.startsWith('delegate')) return { toolCalls: [{ name: 'helper', input: { task: 'the tide' } }] };
    if (task.startsWith('wait')) return { toolCalls: [{ name: 'slow', input: {} }] };
    return { text: `answer to ${task}` };
  };
  return new Runtime({
    agents: new Map([
      ['main', agent({ name: 'main', tools: ['helper', 'slow'] })],
      ['helper', agent({ name: 'helper' })],
    ]),
    tools: new ToolRegistry([slow]),
    resolveModel: () => new ScriptedModel(script),
    mainModel: 'scripted:test',
    bus,
  });
}

/** Registers the contract's cases; `open` gives a fresh executor over a fresh store for each. */
export function treeExecutorContract(open: () => Promise<ExecutorHarness>, timeoutMs = 20_000): void {
  const userId = 'ann';

  /** Starts `task` on the executor as `ask` would: a slot, a new journal, `finish` returning the outcome. */
  async function start(
    harness: ExecutorHarness,
    task: string,
    more: Partial<Pick<TreeStart<RunOutcome>, 'signal'>> = {},
    answer: Pick<ResumeSpec, 'sessionId' | 'answerId'> = {},
    who = userId,
  ) {
    const events: CadreEvent[] = [];
    const spec: ResumeSpec = { agent: 'main', task, history: [], inputs: {}, ...answer };
    const journalId = `jrn_${randomUUID()}`;
    const finished: RunOutcome[] = [];
    const handle = await harness.executor.start({
      userId: who,
      slot: reserveTree(harness.live, who, undefined),
      onEvent: (event) => events.push(event),
      journal: { id: journalId, spec },
      runtime: contractRuntime(harness.store),
      finish: async (outcome) => {
        finished.push(outcome);
        return outcome;
      },
      ...more,
    });
    return { handle, events, journalId, finished };
  }

  it(
    'starts a tree: the handle names its root, the caller sees every event in order, and the result is what finish made of its end',
    async () => {
      const harness = await open();
      try {
        const { handle, events, finished } = await start(harness, 'when do tides rise?');
        expect(handle.rootRunId).toMatch(/^run_/);
        const { envelope } = await handle.result;
        expect(envelope).toMatchObject({ status: 'ok', summary: 'answer to when do tides rise?' });
        expect(envelope.runId).toBe(handle.rootRunId);
        expect(finished).toHaveLength(1);
        expect(events[0]).toMatchObject({ type: 'run-start', runId: handle.rootRunId, parentRunId: null });
        expect(events.at(-1)).toMatchObject({ type: 'run-finish', runId: handle.rootRunId });
        // Once ended, the slot is free and the store answers every reader: the same events, cursor by cursor.
        expect(harness.live.countFor(userId)).toBe(0);
        const read: Array<{ cursor: number; event: CadreEvent }> = [];
        for await (const item of handle.events()) read.push(item);
        expect(read.map((item) => item.event.type)).toEqual(events.map((event) => event.type));
        expect(read.map((item) => item.cursor)).toEqual(
          [...read.keys()].map((index) => read[0]!.cursor + index),
        );
        const after = read[1]!.cursor;
        const rest: string[] = [];
        for await (const item of handle.events({ after })) rest.push(item.event.type);
        expect(rest).toEqual(read.slice(2).map((item) => item.event.type));
      } finally {
        await harness.close();
      }
    },
    timeoutMs,
  );

  it(
    "stores the answer of a tree that answers in a session where it runs, before its end is shown and its result resolves: text and the sub-agent's run part",
    async () => {
      const harness = await open();
      try {
        // Sessions belong to users the store knows: the one every store has.
        const session = await harness.store.sessions.create('local', { title: 'tides' });
        // Storing is slow here (in this process; as jobs the worker stores through its own store).
        const append = harness.store.sessions.append.bind(harness.store.sessions);
        harness.store.sessions.append = async (...args) => {
          await new Promise((resolve) => setTimeout(resolve, 200));
          return append(...args);
        };
        const answerId = `msg_${randomUUID()}`;
        const { handle, finished } = await start(
          harness,
          'delegate the tide',
          {},
          { sessionId: session.id, answerId },
          'local',
        );
        // A follower that sees the root's end finds the answer stored already.
        let ended = false;
        for await (const { event } of handle.events()) {
          if (event.type !== 'run-finish' || event.runId !== handle.rootRunId) continue;
          ended = true;
          const atEnd = (await harness.store.sessions.get('local', session.id))?.messages ?? [];
          expect(atEnd.map((message) => message.runId)).toEqual([handle.rootRunId]);
        }
        expect(ended).toBe(true);
        await handle.result;
        expect(finished).toHaveLength(1);
        const stored = (await harness.store.sessions.get('local', session.id))?.messages ?? [];
        expect(stored).toHaveLength(1);
        const [answer] = stored;
        expect(answer).toMatchObject({
          id: answerId,
          role: 'assistant',
          runId: handle.rootRunId,
          content: expect.stringContaining('helper found: the tide'),
        });
        const parts = answer!.parts as Array<{ type: string; data?: { agent?: string; status?: string } }>;
        expect(parts.filter((part) => part.type === 'data-run').map((part) => part.data)).toEqual(
          expect.arrayContaining([expect.objectContaining({ agent: 'helper', status: 'ok' })]),
        );
        expect(answer!.metadata).toMatchObject({
          status: 'ok',
          rootRunId: handle.rootRunId,
          delegationUsed: true,
        });
        // Once: the answer is not stored again by anyone reading the tree.
        expect(handle.projection.get(handle.rootRunId)).toMatchObject({ status: 'ok' });
      } finally {
        await harness.close();
      }
    },
    timeoutMs,
  );

  it(
    "journals the tree under its root: the journal is found by the root's id, with the tree's spec",
    async () => {
      const harness = await open();
      try {
        const { handle, journalId } = await start(harness, 'a journaled question');
        await handle.result;
        const found = await harness.store.journal.find(userId, handle.rootRunId);
        expect(found).toMatchObject({ journalId, spec: { agent: 'main', task: 'a journaled question' } });
        expect(found?.attempts).toEqual([handle.rootRunId]);
      } finally {
        await harness.close();
      }
    },
    timeoutMs,
  );

  it(
    'runs a sub-agent as part of the tree: the stored tree holds it under the root, and main hears its answer',
    async () => {
      const harness = await open();
      try {
        const { handle } = await start(harness, 'delegate the tide');
        const { envelope, tree } = await handle.result;
        expect(envelope.status).toBe('ok');
        expect(envelope.summary).toContain('helper found: the tide');
        expect(tree.children).toHaveLength(1);
        expect(tree.children[0]).toMatchObject({ agent: 'helper', status: 'ok' });
      } finally {
        await harness.close();
      }
    },
    timeoutMs,
  );

  it(
    "stops a tree by its handle's cancel: every run ends cancelled, and the result says so",
    async () => {
      const harness = await open();
      try {
        const { handle, events } = await start(harness, 'wait for ever');
        await until(() => events.some((event) => event.type === 'tool-call'));
        expect(await handle.cancel('stopped by the contract')).toBe(true);
        const { envelope } = await handle.result;
        expect(envelope.status).toBe('cancelled');
        expect(harness.live.countFor(userId)).toBe(0);
      } finally {
        await harness.close();
      }
    },
    timeoutMs,
  );

  it(
    "stops a tree when the caller's signal aborts (a closed terminal, a caller gone away)",
    async () => {
      const harness = await open();
      try {
        const caller = new AbortController();
        const { handle, events } = await start(harness, 'wait again', { signal: caller.signal });
        await until(() => events.some((event) => event.type === 'tool-call'));
        caller.abort(new Error('the caller went away'));
        const { envelope } = await handle.result;
        expect(envelope.status).toBe('cancelled');
        // Stopped, not running: a cancel now finds nothing to stop.
        expect(await handle.cancel()).toBe(false);
      } finally {
        await harness.close();
      }
    },
    timeoutMs,
  );

  it(
    'rejects a tree refused before its root starts (an agent no runtime has), and frees its slot',
    async () => {
      const harness = await open();
      try {
        const spec: ResumeSpec = { agent: 'nobody', task: 'who?', history: [], inputs: {} };
        const started = harness.executor.start({
          userId,
          slot: reserveTree(harness.live, userId, undefined),
          journal: { id: `jrn_${randomUUID()}`, spec },
          runtime: contractRuntime(harness.store),
          finish: async (outcome) => outcome,
        });
        await expect(started).rejects.toThrow(/nobody/);
        await until(() => harness.live.countFor(userId) === 0);
      } finally {
        await harness.close();
      }
    },
    timeoutMs,
  );

  it(
    'claims the resume of a journal: a released claim can be taken again',
    async () => {
      const harness = await open();
      try {
        const journalId = `jrn_${randomUUID()}`;
        const first = await harness.executor.claimResume(journalId);
        expect('release' in first).toBe(true);
        if ('release' in first) first.release();
        const again = await harness.executor.claimResume(journalId);
        expect('release' in again).toBe(true);
        if ('release' in again) again.release();
      } finally {
        await harness.close();
      }
    },
    timeoutMs,
  );
}

/** Resolves once `check` holds, looking each 10 ms (for events another part of the process delivers). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 10));
}
