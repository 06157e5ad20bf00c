import { describe, expect, it } from 'vitest';
import { MemoryJournal, userTexts } from '../../test/helpers/memory-journal.ts';
import { agent, setup } from '../../test/helpers/runtime-setup.ts';
import type { ScriptedRequest } from '../models/scripted-model.ts';
import type { CadreEvent } from './events.ts';
import type { TreeSteering } from './tree-record.ts';

/** Sub-agents in the background: main goes on, and each envelope reaches it later, once, also on resume. */

/** Whether the request's conversation has a tool result already (main delegated). */
const called = (request: ScriptedRequest) => request.prompt.some((message) => message.role === 'tool');

/** A promise the test settles when it has looked. */
function held() {
  let release: () => void = () => {};
  const promise = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { promise, release };
}

describe('background sub-agents', () => {
  it('main goes on and answers; the envelope comes later as a new turn main answers', async () => {
    const worker = held();
    const mainRequests: string[] = [];
    const { runtime, events } = setup(
      async (request, who) => {
        if (who === 'worker') {
          await worker.promise;
          return { text: 'owls are birds' };
        }
        mainRequests.push(userTexts(request));
        if (!called(request) && !userTexts(request).includes('has finished'))
          return { toolCalls: [{ name: 'worker', input: { task: 'study owls' } }] };
        if (!userTexts(request).includes('has finished')) return { text: 'worker is on it' };
        return {
          text: userTexts(request).includes('owls are birds') ? 'worker says owls are birds' : 'no result',
        };
      },
      [agent({ name: 'main', tools: ['worker'] }), agent({ name: 'worker', background: true })],
    );
    runtime.bus.subscribe((event) => {
      // Main has answered while the worker still runs: now the worker may end.
      if (event.type === 'step-finish' && event.agent === 'main' && event.finishReason === 'stop')
        worker.release();
    });
    const outcome = await runtime.run({ agent: 'main', task: 'tell me about owls' });
    expect(outcome.envelope.summary).toBe('worker is on it\n\nworker says owls are birds');
    const call = events.find((event) => event.type === 'tool-call' && event.name === 'worker');
    expect(call).toMatchObject({ background: true });
    const result = events.find((event) => event.type === 'tool-result' && event.name === 'worker');
    expect(result).toMatchObject({ ok: true, output: { background: true, status: 'running' } });
    const workerStart = events.find((event) => event.type === 'run-start' && event.agent === 'worker');
    expect(workerStart).toMatchObject({ background: true });
    expect((result as { output: { runId: string } }).output.runId).toBe(workerStart?.runId);
    const delivered = events.filter((event) => event.type === 'run-message');
    expect(delivered).toMatchObject([
      {
        agent: 'main',
        step: 2,
        background: { runId: workerStart?.runId, agent: 'worker', status: 'ok' },
      },
    ]);
    // The tool result told main's model it runs in the background, with its id.
    expect(mainRequests[1]).not.toContain('owls are birds');
    expect(outcome.tree.children[0]).toMatchObject({ agent: 'worker', status: 'ok', background: true });
    // The worker's usage counts in main's subtree.
    expect(outcome.envelope.subtreeUsage.totalTokens).toBeGreaterThan(outcome.envelope.usage.totalTokens);
  });

  it('two background runs ending one after the other give two new turns, the later one seeing the earlier', async () => {
    const gates = { a: held(), b: held() };
    const prompts: string[] = [];
    const { runtime } = setup(
      async (request, who) => {
        if (who === 'worker') {
          const which = userTexts(request).includes('task a') ? 'a' : 'b';
          await gates[which].promise;
          return { text: `result ${which}` };
        }
        prompts.push(userTexts(request));
        if (!called(request))
          return {
            toolCalls: [
              { name: 'worker', input: { task: 'task a' } },
              { name: 'worker', input: { task: 'task b' } },
            ],
          };
        return { text: `turn ${prompts.length}` };
      },
      [agent({ name: 'main', tools: ['worker'] }), agent({ name: 'worker', background: true })],
    );
    runtime.bus.subscribe((event) => {
      if (event.type === 'step-finish' && event.agent === 'main' && event.finishReason === 'stop') {
        if (prompts.length === 2) gates.a.release();
        if (prompts.length === 3) gates.b.release();
      }
    });
    const outcome = await runtime.run({ agent: 'main', task: 'go' });
    expect(outcome.envelope.summary).toBe('turn 2\n\nturn 3\n\nturn 4');
    expect(prompts[3]).toContain('result a');
    expect(prompts[3]).toContain('result b');
  });

  it('a background run that ends while main still works joins main next step, not a new turn', async () => {
    const seen: string[] = [];
    let workerDone = false;
    const { runtime } = setup(
      async (request, who) => {
        if (who === 'worker') return { text: 'found 42' };
        seen.push(userTexts(request));
        if (!called(request)) return { toolCalls: [{ name: 'worker', input: { task: 'count' } }] };
        // Main works on (a tool of its own) until the worker's result has reached it.
        if (!userTexts(request).includes('found 42')) {
          await new Promise((resolve) => setTimeout(resolve, workerDone ? 0 : 5));
          return { toolCalls: [{ name: 'echo', input: { text: `still ${seen.length}` } }] };
        }
        return { text: 'the count is 42' };
      },
      [
        agent({ name: 'main', tools: ['worker', 'echo'], maxTurns: 20 }),
        agent({ name: 'worker', background: true }),
      ],
    );
    runtime.bus.subscribe((event) => {
      if (event.type === 'run-finish' && event.agent === 'worker') workerDone = true;
    });
    const outcome = await runtime.run({ agent: 'main', task: 'count' });
    expect(outcome.envelope.summary).toBe('the count is 42');
    expect(seen.filter((text) => text.includes('found 42'))).toHaveLength(1);
  });

  it('`background: allowed` lets the calling model choose, with a background input declared on the tool', async () => {
    const { runtime, events, model } = setup(
      (request, who) => {
        if (who === 'worker') return { text: `did ${userTexts(request).includes('second') ? 2 : 1}` };
        if (!called(request))
          return {
            toolCalls: [
              { name: 'worker', input: { task: 'first' } },
              { name: 'worker', input: { task: 'second', background: true } },
            ],
          };
        return { text: userTexts(request).includes('has finished') ? 'both' : 'one so far' };
      },
      [agent({ name: 'main', tools: ['worker'] }), agent({ name: 'worker', background: 'allowed' })],
    );
    const outcome = await runtime.run({ agent: 'main', task: 'go' });
    const calls = events.filter((event) => event.type === 'tool-call' && event.name === 'worker');
    expect(calls.map((call) => (call as { background?: boolean }).background ?? false)).toEqual([
      false,
      true,
    ]);
    const starts = events.filter((event) => event.type === 'run-start' && event.agent === 'worker');
    expect(starts.map((start) => (start as { background?: boolean }).background ?? false).sort()).toEqual([
      false,
      true,
    ]);
    expect(outcome.envelope.status).toBe('ok');
    const declared = model.calls[0]?.options.tools?.find((tool) => tool.name === 'worker');
    expect(JSON.stringify(declared)).toContain('background');
  });

  it('past maxBackground a background delegation runs in the foreground', async () => {
    const { runtime, events } = setup(
      (request, who) => {
        if (who === 'worker') return { text: 'done' };
        if (!called(request))
          return {
            toolCalls: [
              { name: 'worker', input: { task: 'one' } },
              { name: 'worker', input: { task: 'two' } },
            ],
          };
        return { text: 'ok' };
      },
      [agent({ name: 'main', tools: ['worker'] }), agent({ name: 'worker', background: true })],
      { maxBackground: 1 },
    );
    await runtime.run({ agent: 'main', task: 'go' });
    const results = events.filter((event) => event.type === 'tool-result' && event.name === 'worker');
    const outputs = results.map((event) => (event as { output: { status: string } }).output.status).sort();
    expect(outputs).toEqual(['ok', 'running']);
  });

  it('a resumed tree replays a delivered envelope once and does not start that run again', async () => {
    const journal = new MemoryJournal();
    const asked: string[] = [];
    const attempt = async () => {
      const worker = held();
      const { runtime, events } = setup(
        async (request, who) => {
          asked.push(who);
          if (who === 'worker') {
            await worker.promise;
            return { text: 'the result' };
          }
          if (!called(request) && !userTexts(request).includes('has finished'))
            return { toolCalls: [{ name: 'worker', input: { task: 'work' } }] };
          return { text: userTexts(request).includes('the result') ? 'got it' : 'waiting' };
        },
        [agent({ name: 'main', tools: ['worker'] }), agent({ name: 'worker', background: true })],
      );
      runtime.bus.subscribe((event) => {
        if (event.type === 'step-finish' && event.agent === 'main' && event.finishReason === 'stop')
          worker.release();
      });
      const outcome = await runtime.run({ agent: 'main', task: 'go', record: { journal } });
      return { outcome, events };
    };
    const first = await attempt();
    expect(first.outcome.envelope.summary).toBe('waiting\n\ngot it');
    const before = asked.length;
    const second = await attempt();
    expect(asked.length).toBe(before);
    expect(second.outcome.envelope.summary).toBe('waiting\n\ngot it');
    expect(second.events.filter((event) => event.type === 'run-message')).toHaveLength(1);
    expect(second.events.some((event) => event.type === 'run-start' && event.agent === 'worker')).toBe(false);
  });

  it('a tree stopped while its background run works starts that run again on resume and delivers it once', async () => {
    const journal = new MemoryJournal();
    const controller = new AbortController();
    const firstEvents: CadreEvent[] = [];
    const first = setup(
      async (request, who) => {
        if (who === 'worker') {
          // The first attempt dies while the worker works.
          controller.abort(new Error('killed'));
          return new Promise(() => {});
        }
        if (!called(request)) return { toolCalls: [{ name: 'worker', input: { task: 'work' } }] };
        return { text: 'waiting' };
      },
      [agent({ name: 'main', tools: ['worker'] }), agent({ name: 'worker', background: true })],
    );
    first.runtime.bus.subscribe((event) => firstEvents.push(event));
    await first.runtime.run({ agent: 'main', task: 'go', record: { journal }, signal: controller.signal });
    const workerAsked: string[] = [];
    const second = setup(
      (request, who) => {
        if (who === 'worker') {
          workerAsked.push('worker');
          return { text: 'the result' };
        }
        if (!called(request) && !userTexts(request).includes('has finished'))
          return { toolCalls: [{ name: 'worker', input: { task: 'work' } }] };
        return { text: userTexts(request).includes('the result') ? 'got it' : 'waiting' };
      },
      [agent({ name: 'main', tools: ['worker'] }), agent({ name: 'worker', background: true })],
    );
    const outcome = await second.runtime.run({ agent: 'main', task: 'go', record: { journal } });
    expect(workerAsked).toHaveLength(1);
    expect(outcome.envelope.summary).toContain('got it');
    expect(second.events.filter((event) => event.type === 'run-message')).toHaveLength(1);
  });

  it('a person who talks to main while it waits for a background run gets a turn of their own, replayed once', async () => {
    const journal = new MemoryJournal();
    const attempt = async (live: boolean) => {
      const worker = held();
      let steering: TreeSteering | undefined;
      const mainSaw: string[] = [];
      const { runtime, events } = setup(
        async (request, who) => {
          if (who === 'worker') {
            await worker.promise;
            return { text: 'the result' };
          }
          mainSaw.push(userTexts(request));
          if (!called(request)) return { toolCalls: [{ name: 'worker', input: { task: 'work' } }] };
          if (userTexts(request).includes('has finished')) return { text: 'got it' };
          if (userTexts(request).includes('are you there')) return { text: 'yes, still waiting' };
          return { text: 'waiting' };
        },
        [agent({ name: 'main', tools: ['worker'] }), agent({ name: 'worker', background: true })],
      );
      runtime.bus.subscribe((event) => {
        if (!live) {
          if (event.type === 'step-finish' && event.agent === 'main' && event.finishReason === 'stop')
            worker.release();
          return;
        }
        if (event.type !== 'step-finish' || event.agent !== 'main' || event.finishReason !== 'stop') return;
        // First answer: the person asks; second (the answer to them): the worker may end.
        if (event.step === 1) steering?.sendMessage(event.runId, { id: 'msg_p', text: 'are you there?' });
        if (event.step === 2) worker.release();
      });
      const outcome = await runtime.run({
        agent: 'main',
        task: 'go',
        record: { journal, steer: (given) => (steering = given) },
      });
      return { outcome, events, mainSaw };
    };
    // A person's message is answered anew (as ever); the background result's turn goes on after that.
    const first = await attempt(true);
    expect(first.outcome.envelope.summary).toBe('yes, still waiting\n\ngot it');
    const second = await attempt(false);
    expect(second.mainSaw).toEqual([]);
    expect(second.outcome.envelope.summary).toBe('yes, still waiting\n\ngot it');
    expect(second.events.filter((event) => event.type === 'run-message').map((event) => event.step)).toEqual([
      2, 3,
    ]);
  });

  it('a result that comes while main writes its answer keeps that answer and goes on after it, also on replay', async () => {
    const journal = new MemoryJournal();
    const attempt = async () => {
      let workerEnded: () => void = () => {};
      const ended = new Promise<void>((resolve) => {
        workerEnded = resolve;
      });
      const asked: string[] = [];
      const { runtime, events } = setup(
        async (request, who) => {
          asked.push(who);
          if (who === 'worker') return { text: 'the result' };
          if (!called(request)) return { toolCalls: [{ name: 'worker', input: { task: 'work' } }] };
          if (userTexts(request).includes('has finished')) return { text: 'got it' };
          // Main writes its answer while the worker ends.
          await ended;
          return { text: 'waiting' };
        },
        [agent({ name: 'main', tools: ['worker'] }), agent({ name: 'worker', background: true })],
      );
      runtime.bus.subscribe((event) => {
        if (event.type === 'run-finish' && event.agent === 'worker') setTimeout(workerEnded, 0);
      });
      const outcome = await runtime.run({ agent: 'main', task: 'go', record: { journal } });
      const text = events
        .filter((event) => event.type === 'text-delta' && event.agent === 'main')
        .map((event) => (event as { delta: string }).delta)
        .join('');
      return { outcome, text, asked };
    };
    const first = await attempt();
    expect(first.outcome.envelope.summary).toBe('waiting\n\ngot it');
    expect(first.text).toBe('waiting\n\ngot it');
    const second = await attempt();
    expect(second.asked).toEqual([]);
    expect(second.outcome.envelope.summary).toBe('waiting\n\ngot it');
    expect(second.text).toBe('waiting\n\ngot it');
  });

  it.each([
    ['max_turns', 'max_turns'],
    ['an error', 'error'],
  ] as const)(
    'a main agent that ends on %s stops its background runs rather than wait for results it cannot take',
    async (_how, status) => {
      const workerAsked = held();
      const { runtime, events } = setup(
        (request, who) => {
          if (who === 'worker') {
            workerAsked.release();
            return { toolCalls: [{ name: 'slow', input: {} }] };
          }
          if (!called(request)) return { toolCalls: [{ name: 'worker', input: { task: 'study owls' } }] };
          if (status === 'error') throw new Error('the provider broke');
          // Its last turn calls a tool again: the turn limit ends it, with one more call for an answer.
          if (request.prompt.filter((message) => message.role === 'tool').length < 2)
            return workerAsked.promise.then(() => ({ toolCalls: [{ name: 'echo', input: { text: 'hm' } }] }));
          return { text: 'I ran out of turns.' };
        },
        [
          agent({ name: 'main', tools: ['worker', 'echo'], maxTurns: 2 }),
          agent({ name: 'worker', tools: ['slow'], background: true }),
        ],
      );
      const journal = new MemoryJournal();
      // Again from the first's journal, as a resume: main's steps replay, and it ends the same way.
      for (const attempt of [1, 2]) {
        events.length = 0;
        const outcome = await runtime.run({ agent: 'main', task: 'tell me about owls', record: { journal } });
        expect([attempt, outcome.envelope.status]).toEqual([attempt, status]);
        const worker = outcome.tree.children[0]!;
        expect(worker).toMatchObject({ agent: 'worker', status: 'cancelled', background: true });
        expect(worker.summary).toContain(`the main agent ended (${status}) and cannot take its result`);
        expect(events).toContainEqual(
          expect.objectContaining({
            type: 'run-error',
            agent: 'worker',
            status: 'cancelled',
            message: expect.stringContaining(`the main agent ended (${status})`),
          }),
        );
        // Not handed to main: it takes no turn for it.
        expect(events.filter((event) => event.type === 'run-message')).toEqual([]);
      }
    },
    10_000,
  );
});
