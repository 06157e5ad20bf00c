import { describe, expect, it } from 'vitest';
import { agentDefinitionSchema } from '../../src/core/agent-definition.ts';
import { CadreError } from '../../src/core/errors.ts';
import type { CadreEvent } from '../../src/core/events.ts';
import { Runtime } from '../../src/core/runtime.ts';
import { ToolRegistry } from '../../src/core/tool-registry.ts';
import { ScriptedModel } from '../../src/models/scripted-model.ts';
import type { Store } from '../../src/store/store.ts';
import { calculateTool } from '../../src/tools/compute/calculate.ts';
import { chatListIsTold } from './chat-list-scenario.ts';
import { describeDocumentStoreContract } from './document-store-contract.ts';
import { describeHttpCacheContract } from './http-cache-contract.ts';
import { describeJournalStoreContract } from './journal-store-contract.ts';

/** A main agent that delegates 6*7 to a math agent that calls `calculate`: a three-level tree. */
function delegatingRuntime(store: Store) {
  const model = new ScriptedModel((request) => {
    if (request.system.includes('MAIN') && request.index === 0)
      return { toolCalls: [{ name: 'math', input: { task: '6*7' } }] };
    if (request.system.includes('MATH') && request.toolResults.length === 0) {
      return { toolCalls: [{ name: 'calculate', input: { expression: '6*7' } }] };
    }
    return { text: '42' };
  });
  const agents = new Map(
    [
      { name: 'main', description: 'm', instructions: 'MAIN', tools: ['math'] },
      { name: 'math', description: 'x', instructions: 'MATH', tools: ['calculate'] },
    ].map((input) => [input.name, agentDefinitionSchema.parse(input)]),
  );
  const runtime = new Runtime({
    agents,
    tools: new ToolRegistry([calculateTool]),
    resolveModel: () => model,
    mainModel: 'scripted:x',
  });
  runtime.bus.subscribe((event) => store.runs.record(event));
  return runtime;
}

async function rejection(promise: Promise<unknown>): Promise<CadreError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(CadreError.isInstance(error), String(error)).toBe(true);
  return error as CadreError;
}

/**
 * The behaviour every store backend must have, written once (Hono's habit: one suite over every
 * adapter). `open` gives a fresh, empty store in which the users `alice` and `bob` exist.
 */
export function describeStoreContract(backend: string, open: () => Promise<Store>): void {
  describe(`store contract: ${backend}`, () => {
    describe('runs and events', () => {
      it('reads a run tree back exactly as it was built live, only for the user it ran for', async () => {
        const store = await open();
        const events: CadreEvent[] = [];
        const runtime = delegatingRuntime(store);
        runtime.bus.subscribe((event) => events.push(event));
        const { tree } = await runtime.run({ agent: 'main', task: 'what is 6*7', userId: 'alice' });
        const child = tree.children[0]!;
        expect(await store.runs.getRunTree('alice', tree.id)).toEqual(tree);
        expect(await store.runs.getRunTree('alice', child.id)).toEqual(child);
        expect(await store.runs.listRuns('alice')).toEqual([
          expect.objectContaining({ id: tree.id, status: 'ok', agent: 'main' }),
        ]);
        expect(await store.runs.rootOf('alice', child.id)).toBe(tree.id);
        expect(await store.runs.listRuns('alice', { status: 'ok' })).toHaveLength(1);
        expect(await store.runs.listRuns('alice', { status: 'interrupted' })).toEqual([]);
        expect(await store.runs.listRuns('alice', { sessionId: 'no-such-session' })).toEqual([]);
        expect(await store.runs.getRunTree('bob', tree.id)).toBeUndefined();
        expect(await store.runs.listRuns('bob')).toEqual([]);
        expect(await store.runs.events('bob', tree.id)).toEqual([]);
        expect(await store.runs.rootOf('bob', child.id)).toBeUndefined();
        await store.close();
      });

      it("numbers a tree's events from 1 in recorded order, and replays from any cursor", async () => {
        const store = await open();
        const events: CadreEvent[] = [];
        const runtime = delegatingRuntime(store);
        runtime.bus.subscribe((event) => events.push(event));
        const { tree } = await runtime.run({ agent: 'main', task: 'q', userId: 'alice' });
        const stored = await store.runs.events('alice', tree.id);
        expect(stored.map((entry) => entry.cursor)).toEqual(events.map((_, index) => index + 1));
        expect(stored.map((entry) => entry.event)).toEqual(events);
        const rest = await store.runs.events('alice', tree.id, { after: 5 });
        expect(rest).toEqual(stored.slice(5));
        expect(await store.runs.events('alice', tree.id, { after: stored.length })).toEqual([]);
        expect(events.every((event) => event.rootRunId === tree.id)).toBe(true);
        await store.close();
      });

      it('numbers an event recorded again (a replayed one) nothing: the cursors have no gap', async () => {
        const store = await open();
        const base = {
          rootRunId: 'run_gapless',
          runId: 'run_gapless',
          parentRunId: null,
          depth: 0,
          agent: 'main',
        };
        const start = {
          ...base,
          time: 1,
          seq: 0,
          type: 'run-start' as const,
          task: 't',
          model: 'm:x',
          userId: 'alice',
        };
        const delta = (seq: number, text: string) => ({
          ...base,
          time: 1 + seq,
          seq,
          type: 'text-delta' as const,
          delta: text,
        });
        store.runs.record(start);
        store.runs.record(delta(1, 'a'));
        await store.runs.flush();
        // Going on from its journal, the run records its first events again, then new ones.
        store.runs.record(delta(1, 'a'));
        store.runs.record(delta(2, 'b'));
        store.runs.record(delta(2, 'b'));
        store.runs.record(delta(3, 'c'));
        await store.runs.flush();
        const stored = await store.runs.events('alice', 'run_gapless');
        expect(stored.map((entry) => [entry.cursor, entry.event.seq])).toEqual([
          [1, 0],
          [2, 1],
          [3, 2],
          [4, 3],
        ]);
        await store.close();
      });

      it('keeps large tool outputs whole', async () => {
        const store = await open();
        const output = { text: 'x'.repeat(50_000), items: Array.from({ length: 200 }, (_, index) => index) };
        const base = { rootRunId: 'r1', runId: 'r1', parentRunId: null, depth: 0, agent: 'main', time: 1 };
        store.runs.record({ ...base, seq: 0, type: 'run-start', task: 't', model: 'm:x', userId: 'alice' });
        for (const seq of [1, 2]) {
          store.runs.record({
            ...base,
            seq,
            type: 'tool-result',
            toolCallId: `c${seq}`,
            name: 'big',
            ok: true,
            output,
            ms: 1,
          });
        }
        const stored = await store.runs.events('alice', 'r1');
        expect(stored.map((entry) => (entry.event as { output?: unknown }).output)).toEqual([
          undefined,
          output,
          output,
        ]);
        await store.close();
      });
      it('tells chat lists when a session is written and when a tree starts or ends, with no timer', async () => {
        const store = await open();
        await chatListIsTold(store, store, 'alice');
        await store.close();
      });
      it('wakes whoever watches for stops when one is asked, with no timer', async () => {
        const store = await open();
        const base = { rootRunId: 'r1', runId: 'r1', parentRunId: null, depth: 0, agent: 'main', time: 1 };
        store.runs.record({ ...base, seq: 0, type: 'run-start', task: 't', model: 'm:x', userId: 'alice' });
        let asked = false;
        let heard: () => void = () => {};
        const woken = new Promise<void>((resolve, reject) => {
          heard = resolve;
          setTimeout(() => reject(new Error('no watcher was woken')), 5_000).unref();
        });
        const unwatch = store.runs.watchStops(() => {
          if (asked) heard();
        });
        asked = true;
        expect(await store.runs.requestStop('alice', 'r1', 'stopped from another page')).toBe(true);
        await woken;
        expect(await store.runs.takeStopRequests(['r1'])).toEqual(
          new Map([['r1', 'stopped from another page']]),
        );
        unwatch();
        await store.close();
      });
      it('hands a stop asked of a running tree to whoever takes it, once, and only for its own user', async () => {
        const store = await open();
        const base = { rootRunId: 'r1', runId: 'r1', parentRunId: null, depth: 0, agent: 'main', time: 1 };
        store.runs.record({ ...base, seq: 0, type: 'run-start', task: 't', model: 'm:x', userId: 'alice' });
        expect(await store.runs.requestStop('bob', 'r1', 'no')).toBe(false);
        expect(await store.runs.requestStop('alice', 'nope', 'no')).toBe(false);
        expect(await store.runs.takeStopRequests(['r1'])).toEqual(new Map());
        expect(await store.runs.requestStop('alice', 'r1', 'stopped by the person')).toBe(true);
        expect(await store.runs.takeStopRequests(['r1', 'r2'])).toEqual(
          new Map([['r1', 'stopped by the person']]),
        );
        expect(await store.runs.takeStopRequests(['r1'])).toEqual(new Map());
        const usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
        store.runs.record({
          ...base,
          seq: 1,
          type: 'run-finish',
          status: 'ok',
          summary: 'done',
          usage,
          subtreeUsage: usage,
        });
        // An ended tree has nothing to stop.
        expect(await store.runs.requestStop('alice', 'r1', 'too late')).toBe(false);
        await store.close();
      });
    });

    describe('kept conversations', () => {
      it("keeps a finished run's conversation for its user only, with its tree's session, and drops it with the tree", async () => {
        const store = await open();
        const usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
        const root = { rootRunId: 'r1', runId: 'r1', parentRunId: null, depth: 0, agent: 'main', time: 1 };
        const child = { ...root, runId: 'c1', parentRunId: 'r1', depth: 1, agent: 'research' };
        store.runs.record({
          ...root,
          seq: 0,
          type: 'run-start',
          task: 't',
          model: 'm:x',
          userId: 'alice',
          sessionId: 's1',
        });
        store.runs.record({
          ...child,
          seq: 0,
          type: 'run-start',
          task: 'look',
          model: 'm:x',
          userId: 'alice',
        });
        const messages = [
          { role: 'user', content: 'look \u0000 up' },
          { role: 'assistant', content: [{ type: 'text', text: 'found it' }] },
        ];
        await store.runs.keepConversation('alice', 'c1', {
          conversation: JSON.stringify(messages),
          chars: 99,
        });
        store.runs.record({
          ...child,
          seq: 1,
          type: 'run-finish',
          status: 'ok',
          summary: 'found',
          usage,
          subtreeUsage: usage,
        });
        expect(await store.runs.keptConversation('alice', 'c1')).toEqual({
          runId: 'c1',
          agent: 'research',
          rootRunId: 'r1',
          parentId: 'r1',
          sessionId: 's1',
          status: 'ok',
          messages,
          chars: 99,
        });
        // Someone else's run is no run at all.
        expect(await store.runs.keptConversation('bob', 'c1')).toBeUndefined();
        expect(await store.runs.keptConversation('alice', 'nope')).toBeUndefined();
        // A root keeps none; one too large to keep says only how large it was (kept again: the later wins).
        expect(await store.runs.keptConversation('alice', 'r1')).toMatchObject({
          parentId: null,
          status: 'running',
        });
        expect((await store.runs.keptConversation('alice', 'r1'))?.messages).toBeUndefined();
        await store.runs.keepConversation('alice', 'c1', { conversation: null, chars: 5_000_000 });
        const tooLarge = await store.runs.keptConversation('alice', 'c1');
        expect([tooLarge?.messages, tooLarge?.chars]).toEqual([undefined, 5_000_000]);
        store.runs.record({
          ...root,
          seq: 1,
          type: 'run-finish',
          status: 'ok',
          summary: 'done',
          usage,
          subtreeUsage: usage,
        });
        expect(await store.runs.removeTree('alice', 'r1')).toBe(true);
        expect(await store.runs.keptConversation('alice', 'c1')).toBeUndefined();
        // Nothing of it is left behind to come back under the same id.
        store.runs.record({ ...root, seq: 0, type: 'run-start', task: 't', model: 'm:x', userId: 'alice' });
        store.runs.record({
          ...child,
          seq: 0,
          type: 'run-start',
          task: 'look',
          model: 'm:x',
          userId: 'alice',
        });
        expect((await store.runs.keptConversation('alice', 'c1'))?.chars).toBeUndefined();
        await store.close();
      });
    });

    describe('sessions', () => {
      it('keeps sessions and their messages per user', async () => {
        const store = await open();
        const session = await store.sessions.create('alice', { title: 'Tides' });
        await store.sessions.append('alice', session.id, { role: 'user', content: 'hello' });
        await store.sessions.append('alice', session.id, {
          role: 'assistant',
          content: 'hi',
          runId: 'run_1',
          parts: [{ type: 'text', text: 'hi' }],
        });
        const read = await store.sessions.get('alice', session.id);
        expect(read?.messages).toEqual([
          expect.objectContaining({ role: 'user', content: 'hello' }),
          expect.objectContaining({
            role: 'assistant',
            content: 'hi',
            runId: 'run_1',
            parts: [{ type: 'text', text: 'hi' }],
          }),
        ]);
        expect(await store.sessions.list('alice')).toEqual([expect.objectContaining({ id: session.id })]);
        expect(await store.sessions.get('bob', session.id)).toBeUndefined();
        expect(await store.sessions.list('bob')).toEqual([]);
        const refused = await rejection(
          store.sessions.append('bob', session.id, { role: 'user', content: 'x' }),
        );
        expect(refused).toMatchObject({ fault: 'user', code: 'unknown_session' });
        expect(await store.sessions.delete('bob', session.id)).toBe(false);
        expect(await store.sessions.delete('alice', session.id)).toBe(true);
        expect(await store.sessions.get('alice', session.id)).toBeUndefined();
        await store.close();
      });

      it("finds the caller's own messages by their words, with the matching line, and forgets removed ones", async () => {
        const store = await open();
        const owls = await store.sessions.create('alice', { title: 'Owls' });
        const herons = await store.sessions.create('alice', { title: 'Herons' });
        const theirs = await store.sessions.create('bob', { title: 'Owls too' });
        await store.sessions.append('alice', owls.id, { role: 'user', content: 'Where do owls hunt?' });
        const answer = await store.sessions.append('alice', owls.id, {
          role: 'assistant',
          content: 'Barn owls listen for voles in the grass at night, over open fields.',
        });
        await store.sessions.append('alice', herons.id, {
          role: 'user',
          content: 'Herons wait in shallow water.',
        });
        await store.sessions.append('bob', theirs.id, {
          role: 'user',
          content: 'Owls hunting voles, again.',
        });

        const found = await store.sessions.searchMessages('alice', 'voles');
        expect(found).toEqual([
          expect.objectContaining({
            sessionId: owls.id,
            sessionTitle: 'Owls',
            messageId: answer.id,
            role: 'assistant',
          }),
        ]);
        // The line around the match, with words on both sides of it, in either backend.
        expect(found[0]?.line).toContain('listen for voles in the grass');
        // Prefixes, and nothing of another user's.
        expect(
          (await store.sessions.searchMessages('alice', 'her*')).map((match) => match.sessionId),
        ).toEqual([herons.id]);
        expect((await store.sessions.searchMessages('bob', 'owls')).map((match) => match.sessionId)).toEqual([
          theirs.id,
        ]);
        expect(await store.sessions.searchMessages('alice', '"":(*')).toEqual([]);
        // Removed messages and deleted sessions are no longer found.
        await store.sessions.removeFrom('alice', owls.id, answer.id);
        expect(await store.sessions.searchMessages('alice', 'voles')).toEqual([]);
        await store.sessions.delete('alice', herons.id);
        expect(await store.sessions.searchMessages('alice', 'herons')).toEqual([]);
        await store.close();
      });

      it('appends a reply only while its question is still in the session as it was stored', async () => {
        const store = await open();
        const session = await store.sessions.create('alice');
        const asked = await store.sessions.append('alice', session.id, {
          id: 'q1',
          role: 'user',
          content: 'first',
        });
        const question = { id: asked.id, createdAt: asked.createdAt };
        const reply = await store.sessions.appendReply('alice', session.id, question, {
          role: 'assistant',
          content: 'one',
        });
        expect(reply).toMatchObject({ role: 'assistant', content: 'one' });
        const refused = await rejection(
          store.sessions.appendReply('bob', session.id, question, { role: 'assistant', content: 'x' }),
        );
        expect(refused).toMatchObject({ fault: 'user', code: 'unknown_session' });

        // Sent again: the same id, stored anew. A late answer to the first one is not kept.
        await new Promise((resolve) => setTimeout(resolve, 5));
        await store.sessions.removeFrom('alice', session.id, 'q1');
        await store.sessions.append('alice', session.id, { id: 'q1', role: 'user', content: 'first, again' });
        expect(
          await store.sessions.appendReply('alice', session.id, question, {
            role: 'assistant',
            content: 'late',
          }),
        ).toBeUndefined();
        expect(
          await store.sessions.appendReply(
            'alice',
            session.id,
            { id: 'gone', createdAt: asked.createdAt },
            {
              role: 'assistant',
              content: 'late',
            },
          ),
        ).toBeUndefined();
        const read = await store.sessions.get('alice', session.id);
        expect(read?.messages.map((message) => message.content)).toEqual(['first, again']);
        await store.close();
      });

      it("removes a message and everything after it, in the caller's session only", async () => {
        const store = await open();
        const session = await store.sessions.create('alice');
        for (const [id, role, content] of [
          ['q1', 'user', 'first'],
          ['a1', 'assistant', 'one'],
          ['q2', 'user', 'second'],
          ['a2', 'assistant', 'two'],
        ] as const) {
          await store.sessions.append('alice', session.id, { id, role, content });
        }
        const other = await store.sessions.create('alice');
        await store.sessions.append('alice', other.id, { id: 'q9', role: 'user', content: 'elsewhere' });

        expect(await store.sessions.removeFrom('alice', session.id, 'q9')).toBe(0);
        expect(await store.sessions.removeFrom('alice', session.id, 'nope')).toBe(0);
        const refused = await rejection(store.sessions.removeFrom('bob', session.id, 'q2'));
        expect(refused).toMatchObject({ fault: 'user', code: 'unknown_session' });
        expect((await store.sessions.get('alice', session.id))?.messages).toHaveLength(4);

        expect(await store.sessions.removeFrom('alice', session.id, 'q2')).toBe(2);
        // The id is free again, and a message appended goes after what is left.
        await store.sessions.append('alice', session.id, {
          id: 'q2',
          role: 'user',
          content: 'second, edited',
        });
        const read = await store.sessions.get('alice', session.id);
        expect(read?.messages.map((message) => [message.id, message.content])).toEqual([
          ['q1', 'first'],
          ['a1', 'one'],
          ['q2', 'second, edited'],
        ]);
        expect((await store.sessions.get('alice', other.id))?.messages).toHaveLength(1);
        expect((await store.sessions.get('alice', session.id))?.title).toBe('first');

        // The first question edited: the session is titled after the new one.
        expect(await store.sessions.removeFrom('alice', session.id, 'q1')).toBe(3);
        await store.sessions.append('alice', session.id, {
          id: 'q1',
          role: 'user',
          content: 'first, edited',
        });
        expect((await store.sessions.get('alice', session.id))?.title).toBe('first, edited');
        await store.close();
      });

      it('keeps what a resend or an edit replaced as an earlier version, after the message it followed', async () => {
        const store = await open();
        const session = await store.sessions.create('alice');
        for (const [id, role, content, runId] of [
          ['q1', 'user', 'first', undefined],
          ['a1', 'assistant', 'one', 'run_a1'],
          ['q2', 'user', 'second', undefined],
          ['a2', 'assistant', 'two\u0000 🦉', 'run_a2'],
        ] as const) {
          await store.sessions.append('alice', session.id, {
            id,
            role,
            content,
            ...(runId ? { runId } : {}),
          });
        }
        expect((await store.sessions.get('alice', session.id))?.versions).toEqual([]);
        // Regenerate the second answer: q2 and a2 become version 1 of what follows a1.
        expect(await store.sessions.removeFrom('alice', session.id, 'q2', { keep: true })).toBe(2);
        await store.sessions.append('alice', session.id, { id: 'q2', role: 'user', content: 'second' });
        await store.sessions.append('alice', session.id, {
          id: 'a2b',
          role: 'assistant',
          content: 'two again',
        });
        // Edit the first question: everything becomes a version of the session's start.
        await new Promise((resolve) => setTimeout(resolve, 5));
        expect(await store.sessions.removeFrom('alice', session.id, 'q1', { keep: true })).toBe(4);
        await store.sessions.append('alice', session.id, {
          id: 'q1',
          role: 'user',
          content: 'first, edited',
        });

        const read = await store.sessions.get('alice', session.id);
        expect(read?.messages.map((message) => message.content)).toEqual(['first, edited']);
        expect(read?.versions.map((version) => version.afterId)).toEqual(['a1', null]);
        const [regenerated, edited] = read!.versions;
        expect(regenerated!.messages.map((message) => [message.id, message.content, message.runId])).toEqual([
          ['q2', 'second', undefined],
          ['a2', 'two\u0000 🦉', 'run_a2'],
        ]);
        expect(edited!.messages.map((message) => message.content)).toEqual([
          'first',
          'one',
          'second',
          'two again',
        ]);
        expect(edited!.messages[1]).toMatchObject({ id: 'a1', role: 'assistant', runId: 'run_a1' });
        expect(Date.parse(edited!.replacedAt)).toBeGreaterThanOrEqual(Date.parse(regenerated!.replacedAt));
        expect(regenerated!.id).not.toBe(edited!.id);
        // Without keep, nothing is kept; versions are the caller's only and go with their session.
        await store.sessions.removeFrom('alice', session.id, 'q1');
        expect((await store.sessions.get('alice', session.id))?.versions).toHaveLength(2);
        expect(await store.sessions.get('bob', session.id)).toBeUndefined();
        const bobs = await store.sessions.create('bob', { id: session.id });
        expect((await store.sessions.get('bob', bobs.id))?.versions).toEqual([]);
        await store.sessions.delete('alice', session.id);
        await store.sessions.create('alice', { id: session.id });
        expect((await store.sessions.get('alice', session.id))?.versions).toEqual([]);
        await store.close();
      });

      it('restores an earlier version in place of what follows its message, keeping that as a version', async () => {
        const store = await open();
        const session = await store.sessions.create('alice');
        for (const [id, role, content] of [
          ['q1', 'user', 'first'],
          ['a1', 'assistant', 'one'],
          ['q2', 'user', 'second'],
          ['a2', 'assistant', 'two 🦉'],
        ] as const) {
          await store.sessions.append('alice', session.id, { id, role, content, runId: `run_${id}` });
        }
        const before = (await store.sessions.get('alice', session.id))!.messages;
        await store.sessions.removeFrom('alice', session.id, 'q2', { keep: true });
        await store.sessions.append('alice', session.id, { id: 'q2', role: 'user', content: 'second' });
        await store.sessions.append('alice', session.id, {
          id: 'a2b',
          role: 'assistant',
          content: 'two again',
        });
        const [kept] = (await store.sessions.get('alice', session.id))!.versions;

        expect(await store.sessions.restoreVersion('alice', session.id, 'ver_nope')).toBe(false);
        const refused = await rejection(store.sessions.restoreVersion('bob', session.id, kept!.id));
        expect(refused).toMatchObject({ fault: 'user', code: 'unknown_session' });
        expect(await store.sessions.restoreVersion('alice', session.id, kept!.id)).toBe(true);
        const read = (await store.sessions.get('alice', session.id))!;
        // The restored messages are as they were stored: ids, times, runs.
        expect(read.messages).toEqual(before);
        expect(read.versions).toHaveLength(1);
        expect(read.versions[0]).toMatchObject({ afterId: 'a1' });
        expect(read.versions[0]!.id).not.toBe(kept!.id);
        expect(read.versions[0]!.messages.map((message) => message.id)).toEqual(['q2', 'a2b']);
        // A new question follows the restored version.
        await store.sessions.append('alice', session.id, { id: 'q3', role: 'user', content: 'third' });
        expect(
          (await store.sessions.get('alice', session.id))!.messages.map((message) => message.id),
        ).toEqual(['q1', 'a1', 'q2', 'a2', 'q3']);
        // A version whose message left the current branch cannot be restored here.
        await store.sessions.removeFrom('alice', session.id, 'q1');
        expect(await store.sessions.restoreVersion('alice', session.id, read.versions[0]!.id)).toBe(false);
        await store.close();
      });

      it('keeps text exactly as written, whatever characters it holds (NUL, controls, emoji)', async () => {
        const store = await open();
        const odd = 'a\u0000b \u0001c\u0001\u0000 \u{1F30A} \u202Eevil';
        const session = await store.sessions.create('alice');
        await store.sessions.append('alice', session.id, { role: 'user', content: odd });
        const read = await store.sessions.get('alice', session.id);
        expect(read?.messages[0]?.content).toBe(odd);
        expect(read?.title).toContain('\u{1F30A}');
        const base = { rootRunId: 'r1', runId: 'r1', parentRunId: null, depth: 0, agent: 'main', time: 1 };
        store.runs.record({ ...base, seq: 0, type: 'run-start', task: odd, model: 'm:x', userId: 'alice' });
        const usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
        store.runs.record({
          ...base,
          seq: 1,
          type: 'run-finish',
          status: 'ok',
          summary: odd,
          usage,
          subtreeUsage: usage,
        });
        expect(await store.runs.listRuns('alice')).toEqual([
          expect.objectContaining({ task: odd, summary: odd }),
        ]);
        expect((await store.runs.getRunTree('alice', 'r1'))?.task).toBe(odd);
        await store.close();
      });

      it("renames a session of the caller's, and no one else's", async () => {
        const store = await open();
        const session = await store.sessions.create('alice', { title: 'What is 17 times 23?' });
        const before = (await store.sessions.get('alice', session.id))!.updatedAt;
        expect(await store.sessions.rename('alice', session.id, 'Sums ✓ for Lyon')).toBe(true);
        expect(await store.sessions.rename('bob', session.id, 'Taken')).toBe(false);
        expect(await store.sessions.rename('alice', 'nope', 'Missing')).toBe(false);
        const renamed = (await store.sessions.get('alice', session.id))!;
        expect(renamed).toMatchObject({ title: 'Sums ✓ for Lyon', updatedAt: before });
        // A question appended later keeps the chosen title, and so does editing the first question.
        await store.sessions.append('alice', session.id, {
          id: 'q1',
          role: 'user',
          content: 'What is 17 times 23?',
        });
        await store.sessions.append('alice', session.id, { role: 'user', content: 'And 2 + 2?' });
        expect((await store.sessions.list('alice'))[0]?.title).toBe('Sums ✓ for Lyon');
        await store.sessions.removeFrom('alice', session.id, 'q1');
        expect((await store.sessions.get('alice', session.id))?.title).toBe('Sums ✓ for Lyon');
        await store.close();
      });

      it('creates a session with a chosen id once per user', async () => {
        const store = await open();
        await store.sessions.create('alice', { id: 'chat-1' });
        expect(await store.sessions.get('alice', 'chat-1')).toMatchObject({ id: 'chat-1', messages: [] });
        const taken = await rejection(store.sessions.create('alice', { id: 'chat-1' }));
        expect(taken).toMatchObject({ fault: 'user', code: 'session_exists' });
        await store.close();
      });

      it("keys sessions by user: another user's id is a session of one's own, and theirs is untouched", async () => {
        const store = await open();
        const result = { envelope: { status: 'ok', summary: 'kept' } as never, finishedAt: 1 };
        const key = (userId: string) => ({
          userId,
          sessionId: 'chat-1',
          agent: 'math',
          model: 'm',
          input: '{}',
        });
        await store.sessions.create('alice', { id: 'chat-1', title: 'Alice' });
        await store.sessions.append('alice', 'chat-1', { id: 'q1', role: 'user', content: 'alice asks' });
        await store.results.remember(key('alice'), result);
        // To bob the id is unused: reading, writing, deleting answer as for an id nobody has.
        expect(await store.sessions.get('bob', 'chat-1')).toBeUndefined();
        expect(await store.sessions.delete('bob', 'chat-1')).toBe(false);
        expect(await store.sessions.rename('bob', 'chat-1', 'Mine now')).toBe(false);
        const refused = await rejection(
          store.sessions.append('bob', 'chat-1', { role: 'user', content: 'x' }),
        );
        expect(refused).toMatchObject({ code: 'unknown_session', message: 'There is no session "chat-1".' });
        const unused = await rejection(
          store.sessions.append('bob', 'chat-9', { role: 'user', content: 'x' }),
        );
        expect(unused.message).toBe('There is no session "chat-9".');

        // Bob makes a session of that id, with a message of the same id: his own, beside alice's.
        await store.sessions.create('bob', { id: 'chat-1', title: 'Bob' });
        const asked = await store.sessions.append('bob', 'chat-1', {
          id: 'q1',
          role: 'user',
          content: 'bob asks',
        });
        await store.results.remember(key('bob'), result);
        expect(await store.sessions.get('bob', 'chat-1')).toMatchObject({
          title: 'Bob',
          messages: [{ id: 'q1', content: 'bob asks' }],
        });
        expect(
          await store.sessions.appendReply(
            'bob',
            'chat-1',
            { id: 'q1', createdAt: asked.createdAt },
            {
              role: 'assistant',
              content: 'for bob',
            },
          ),
        ).toBeDefined();
        expect(await store.sessions.rename('bob', 'chat-1', 'Bob renamed')).toBe(true);
        expect(await store.sessions.removeFrom('bob', 'chat-1', 'q1')).toBe(2);
        expect(await store.sessions.list('bob')).toEqual([expect.objectContaining({ id: 'chat-1' })]);
        expect(await store.sessions.delete('bob', 'chat-1')).toBe(true);
        expect(await store.results.recall(key('bob'))).toBeUndefined();

        // Alice's session, its message and its remembered result are as she left them.
        expect(await store.sessions.get('alice', 'chat-1')).toMatchObject({
          title: 'Alice',
          messages: [{ id: 'q1', content: 'alice asks' }],
        });
        expect(await store.results.recall(key('alice'))).toMatchObject({ finishedAt: 1 });
        await store.close();
      });
    });

    describe('settings', () => {
      it('stores JSON values by scope and key', async () => {
        const store = await open();
        await store.settings.put('agent:alice', 'research', { enabled: false });
        await store.settings.put('agent:alice', 'math', { model: 'openai:gpt-5-mini' });
        await store.settings.put('agent:alice', 'research', { enabled: true });
        expect(await store.settings.get('agent:alice', 'research')).toEqual({ enabled: true });
        expect(await store.settings.list('agent:alice')).toEqual({
          math: { model: 'openai:gpt-5-mini' },
          research: { enabled: true },
        });
        expect(await store.settings.list('agent:bob')).toEqual({});
        expect(await store.settings.delete('agent:alice', 'math')).toBe(true);
        expect(await store.settings.get('agent:alice', 'math')).toBeUndefined();
        await store.close();
      });
    });

    describe('users', () => {
      it('adds a user with a token once per name, verifies the token, and removes the user', async () => {
        const store = await open();
        expect(await store.users.hasTokens()).toBe(false);
        const { user, token } = await store.users.add('carol');
        expect(await rejection(store.users.add('carol'))).toMatchObject({ code: 'user_exists' });
        expect(await store.users.hasTokens()).toBe(true);
        expect((await store.users.list()).map((listed) => listed.name)).toEqual(['carol']);
        expect(await store.users.verify(token)).toEqual(user);
        expect(await store.users.verify(`${token}x`)).toBeUndefined();
        expect(await store.users.remove('carol')).toBe(true);
        expect(await store.users.remove('carol')).toBe(false);
        expect(await store.users.verify(token)).toBeUndefined();
        expect(await store.users.hasTokens()).toBe(false);
        await store.close();
      });
    });

    describe('result memory', () => {
      it("remembers a result per user and session, and nothing for a session that is not the caller's", async () => {
        const store = await open();
        const key = { userId: 'alice', sessionId: 'chat-1', agent: 'math', model: 'm', input: '{}' };
        const result = (summary: string, finishedAt: number) => ({
          envelope: { status: 'ok', summary } as never,
          finishedAt,
        });
        // No such session (removed while its tree ran): nothing is kept, and nothing fails.
        await store.results.remember(key, result('early', 1));
        expect(await store.results.recall(key)).toBeUndefined();
        await store.sessions.create('alice', { id: 'chat-1' });
        await store.results.remember({ ...key, userId: 'bob' }, result('not bob', 1));
        expect(await store.results.recall({ ...key, userId: 'bob' })).toBeUndefined();
        await store.results.remember(key, result('first', 1));
        await store.results.remember(key, result('newer', 2));
        expect(await store.results.recall(key)).toEqual({
          envelope: { status: 'ok', summary: 'newer' },
          finishedAt: 2,
        });
        expect(await store.results.recall({ ...key, input: '{"other":1}' })).toBeUndefined();
        await store.close();
      });
    });

    describeDocumentStoreContract(open);
    describeHttpCacheContract(open);
    describeJournalStoreContract(open);
  });
}
