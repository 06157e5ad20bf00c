/**
 * Runs as jobs on PostgreSQL: `cadre ask --no-worker` puts the tree on the queue and two `cadre worker`
 * processes run it; a worker killed mid-tree hands its jobs to the other, which goes on from the journal.
 * Real processes and a real database (CADRE_TEST_DATABASE_URL; CI starts one): the process boundary and
 * the queue between them are the subject.
 */
import { describe, expect, it } from 'vitest';
import type { RunTree } from '../../src/core/run-tree.ts';
import { type RecordedRequest, startOpenAIServer } from '../fixtures/openai-server.ts';
import { runCli, tempHome } from '../helpers/cli.ts';
import { freshSchema, startWorker, TEST_DATABASE_URL } from '../helpers/postgres.ts';
import { storeReader } from '../helpers/store-reader.ts';
import { isMain, isMath } from '../web/web-app-setup.ts';

const lastIsUser = (request: RecordedRequest) => request.body.messages.at(-1)?.role === 'user';

/** Resolves once `count` calls have been made; each call returns the same promise. */
function gathering(count: number) {
  let seen = 0;
  let release = () => {};
  const all = new Promise<void>((resolve) => {
    release = resolve;
  });
  return () => {
    if (++seen >= count) release();
    return all;
  };
}

async function cadreEnv(model: { baseURL: string }, name: string) {
  return {
    CADRE_HOME: tempHome(),
    CADRE_MODEL: 'compatible:fixture',
    CADRE_COMPATIBLE_BASE_URL: model.baseURL,
    CADRE_DATABASE_URL: await freshSchema(name),
  };
}

describe.skipIf(!TEST_DATABASE_URL)('runs as jobs on PostgreSQL', () => {
  it('spreads four parallel sub-agents over two workers with two slots each, the asking process running none', async () => {
    // Every math run is held until all four are asking at once: they can only finish if they run in parallel.
    const allFour = gathering(4);
    const model = await startOpenAIServer((request) => {
      if (isMain(request.system) && lastIsUser(request))
        return {
          toolCalls: [1, 2, 3, 4].map((n) => ({ name: 'math', arguments: { task: `Compute part ${n}.` } })),
        };
      if (isMain(request.system)) return { text: 'All four parts are done.' };
      if (isMath(request.system)) return { text: 'Part computed.', until: allFour() };
      return { text: 'unexpected' };
    });
    const env = await cadreEnv(model, 'fanout');
    const workers = [await startWorker(env, 'w1', ['--concurrency', '2'])];
    workers.push(await startWorker(env, 'w2', ['--concurrency', '2']));
    const asked = await runCli(['ask', '--no-worker', '--json', 'Compute the four parts.'], env);
    expect(asked.stderr).toBe('');
    expect(asked.code).toBe(0);
    const result = JSON.parse(asked.stdout) as { answer: string; run: RunTree };
    expect(result.answer).toBe('All four parts are done.');
    const children = result.run.children;
    expect(children.map((child) => child.status)).toEqual(['ok', 'ok', 'ok', 'ok']);
    const perWorker = new Map<string, number>();
    for (const child of children) perWorker.set(child.worker!, (perWorker.get(child.worker!) ?? 0) + 1);
    expect(Object.fromEntries(perWorker)).toEqual({ w1: 2, w2: 2 });
    expect(['w1', 'w2']).toContain(result.run.worker);
    // The four math requests overlapped: each was answered only after the last had arrived.
    const math = model.requests.filter((request) => isMath(request.system));
    expect(math).toHaveLength(4);
    const lastArrival = Math.max(...math.map((request) => request.receivedAt));
    for (const request of math) expect(request.answeredAt).toBeGreaterThanOrEqual(lastArrival);
  }, 60_000);

  it('one worker with one slot finishes a tree of depth two and fan-out four (a waiting parent holds no slot)', async () => {
    const model = await startOpenAIServer((request) => {
      if (isMain(request.system) && lastIsUser(request))
        return {
          toolCalls: [1, 2, 3, 4].map((n) => ({ name: 'math', arguments: { task: `Compute part ${n}.` } })),
        };
      if (isMain(request.system)) return { text: 'Done with all four.' };
      if (isMath(request.system)) return { text: 'Part computed.' };
      return { text: 'unexpected' };
    });
    const env = await cadreEnv(model, 'oneslot');
    await startWorker(env, 'solo', ['--concurrency', '1']);
    const asked = await runCli(['ask', '--no-worker', '--json', 'Compute the four parts.'], env);
    expect(asked.code).toBe(0);
    const result = JSON.parse(asked.stdout) as { answer: string; run: RunTree };
    expect(result.answer).toBe('Done with all four.');
    expect(result.run.children.map((child) => [child.status, child.worker])).toEqual(
      Array(4).fill(['ok', 'solo']),
    );
  }, 60_000);

  it('a worker killed while its sub-agent is mid-way: the other worker finishes the tree, no committed step asked again', async () => {
    let releaseSecondStep = () => {};
    const secondStepHeld = new Promise<void>((resolve) => {
      releaseSecondStep = resolve;
    });
    const model = await startOpenAIServer((request) => {
      if (isMain(request.system) && lastIsUser(request))
        return { toolCalls: [{ name: 'math', arguments: { task: 'What is 6 times 7?' } }] };
      if (isMain(request.system)) return { text: 'The product is 42.' };
      if (isMath(request.system) && lastIsUser(request))
        return { toolCalls: [{ name: 'calculate', arguments: { expression: '6 * 7' } }] };
      // The step after the committed one: held until the worker running it has been killed.
      if (isMath(request.system)) return { text: '6 times 7 is 42.', until: secondStepHeld };
      return { text: 'unexpected' };
    });
    const env = await cadreEnv(model, 'kill');
    const first = await startWorker(env, 'first', ['--concurrency', '2']);
    const asking = runCli(['ask', '--no-worker', '--json', 'What is 6 times 7?'], env);
    // Only `first` runs at this point, so it holds the tree and the sub-agent.
    await first.waitFor(/took run job/);
    const mathAsked = () => model.requests.filter((request) => isMath(request.system));
    while (mathAsked().length < 2) await new Promise((resolve) => setTimeout(resolve, 50));
    const second = await startWorker(env, 'second', ['--concurrency', '2']);
    const killedAt = Date.now();
    await first.kill();
    releaseSecondStep();
    await second.waitFor(/took run job/, 40_000);
    const takenOverMs = Date.now() - killedAt;
    const asked = await asking;
    expect(asked.code).toBe(0);
    const result = JSON.parse(asked.stdout) as { answer: string; run: RunTree };
    expect(result.answer).toBe('The product is 42.');
    const [child] = result.run.children;
    expect(child?.status).toBe('ok');
    expect(child?.worker).toBe('second');
    // The sub-agent's committed first step (the calculate call) was not asked again; the one in flight was.
    const math = mathAsked();
    expect(math.filter(lastIsUser)).toHaveLength(1);
    expect(math.filter((request) => !lastIsUser(request))).toHaveLength(2);
    // Main's committed step (the delegation) was not asked again either.
    expect(model.requests.filter((request) => isMain(request.system) && lastIsUser(request))).toHaveLength(1);
    expect(takenOverMs).toBeLessThan(30_000);
  }, 90_000);

  it('a worker given SIGTERM lets its step in flight end, hands its runs over there and exits; the other worker finishes them', async () => {
    let releaseFirstStep = () => {};
    const firstStepHeld = new Promise<void>((resolve) => {
      releaseFirstStep = resolve;
    });
    const model = await startOpenAIServer((request) => {
      if (isMain(request.system) && lastIsUser(request))
        return { toolCalls: [{ name: 'math', arguments: { task: 'What is 6 times 7?' } }] };
      if (isMain(request.system)) return { text: 'The product is 42.' };
      // The sub-agent's first step is in flight when the worker is told to stop.
      if (isMath(request.system) && lastIsUser(request))
        return {
          toolCalls: [{ name: 'calculate', arguments: { expression: '6 * 7' } }],
          until: firstStepHeld,
        };
      if (isMath(request.system)) return { text: '6 times 7 is 42.' };
      return { text: 'unexpected' };
    });
    const env = await cadreEnv(model, 'sigterm');
    const first = await startWorker(env, 'first', ['--concurrency', '2']);
    const asking = runCli(['ask', '--no-worker', '--json', 'What is 6 times 7?'], env);
    await first.waitFor(/took run job/);
    while (!model.requests.some((request) => isMath(request.system))) await sleep(50);
    const second = await startWorker(env, 'second', ['--concurrency', '2']);
    const exited = new Promise((resolve) => first.child.once('exit', resolve));
    const stoppedAt = Date.now();
    first.child.kill('SIGTERM');
    await first.waitFor(/SIGTERM: taking no more jobs/);
    releaseFirstStep();
    await exited;
    // Out at the sub-agent's next step boundary, well before the 10 s it would wait for runs to end.
    expect(Date.now() - stoppedAt).toBeLessThan(8_000);
    expect(first.output()).toMatch(/stopped\n/);
    const asked = await asking;
    expect(asked.code).toBe(0);
    const result = JSON.parse(asked.stdout) as { answer: string; run: RunTree };
    expect(result.answer).toBe('The product is 42.');
    expect(result.run.status).toBe('ok');
    expect(result.run.worker).toBe('second');
    expect(result.run.children.map((child) => [child.status, child.worker])).toEqual([['ok', 'second']]);
    // The step that was in flight ended on `first` and was committed there: nobody asked it again.
    const math = model.requests.filter((request) => isMath(request.system));
    expect(math.filter(lastIsUser)).toHaveLength(1);
    expect(math).toHaveLength(2);
    expect(model.requests.filter((request) => isMain(request.system) && lastIsUser(request))).toHaveLength(1);
    // Handing over is not an end: nothing of the tree was recorded cancelled on the way.
    const store = storeReader(env);
    const bodies = await store.rows<{ body: string }>('SELECT body FROM events');
    await store.close();
    expect(bodies.length).toBeGreaterThan(10);
    expect(bodies.filter((row) => row.body.includes('"cancelled"'))).toEqual([]);
    expect(second.output()).toMatch(/took tree job .* \(try 2\)/);
  }, 90_000);
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
