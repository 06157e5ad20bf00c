/**
 * Runs as jobs on PostgreSQL: `cadre ask --no-worker` puts the tree on the queue and two `cadre worker`
 * processes run it; a worker killed mid-tree hands its jobs to the other, which goes on from the journal.
 * Real processes and a real database (CADRE_TEST_DATABASE_URL; CI starts one): the process boundary and
 * the queue between them are the subject.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunTree } from '../../src/core/run-tree.ts';
import { type RecordedRequest, startOpenAIServer } from '../fixtures/openai-server.ts';
import { complaints, fixtureModelEnv, runCli, tempHome } from '../helpers/cli.ts';
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
    ...fixtureModelEnv(model),
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
    expect(complaints(asked.stderr)).toBe('');
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
      // Each part takes longer than a parent waits before its job is set aside.
      if (isMath(request.system)) return { text: 'Part computed.', delayMs: 1_200 };
      return { text: 'unexpected' };
    });
    const env = await cadreEnv(model, 'oneslot');
    const solo = await startWorker(env, 'solo', ['--concurrency', '1']);
    const asked = await runCli(['ask', '--no-worker', '--json', 'Compute the four parts.'], env);
    expect(asked.code).toBe(0);
    const result = JSON.parse(asked.stdout) as { answer: string; run: RunTree };
    expect(result.answer).toBe('Done with all four.');
    expect(result.run.children.map((child) => [child.status, child.worker])).toEqual(
      Array(4).fill(['ok', 'solo']),
    );
    // main's job ended while its sub-agents ran, and the last of them put it back on the queue: it went
    // on from its journal (its delegation step was not asked again).
    expect(solo.output()).toMatch(/set aside tree job \S+ while 4 sub-agent run\(s\) it waits on go on/);
    expect(solo.output()).toMatch(/took tree job \S+ \(resumed\)/);
    const mainAsked = model.requests.filter((request) => isMain(request.system));
    expect(mainAsked.filter(lastIsUser)).toHaveLength(1);
    expect(mainAsked).toHaveLength(2);
    expect(result.run.status).toBe('ok');
  }, 60_000);

  it('one worker with one slot finishes several trees asked at once, each parent set aside and resumed', async () => {
    const model = await startOpenAIServer((request) => {
      if (isMain(request.system) && lastIsUser(request))
        return {
          toolCalls: [1, 2].map((n) => ({ name: 'math', arguments: { task: `Compute part ${n}.` } })),
        };
      if (isMain(request.system)) return { text: 'Both parts are done.' };
      if (isMath(request.system)) return { text: 'Part computed.', delayMs: 1_200 };
      return { text: 'unexpected' };
    });
    const env = await cadreEnv(model, 'oneslot_many');
    const solo = await startWorker(env, 'solo', ['--concurrency', '1']);
    const asked = await Promise.all(
      [1, 2, 3].map((n) => runCli(['ask', '--no-worker', '--json', `Compute the parts of ${n}.`], env)),
    );
    for (const result of asked) {
      expect(complaints(result.stderr)).toBe('');
      expect(JSON.parse(result.stdout).answer).toBe('Both parts are done.');
    }
    expect(solo.output()).toMatch(/took tree job \S+ \(resumed\)/);
  }, 90_000);

  it('several trees on one-slot workers, one killed while it runs their sub-agents: the other finishes them all', async () => {
    const model = await startOpenAIServer((request) => {
      if (isMain(request.system) && lastIsUser(request))
        return {
          toolCalls: [1, 2].map((n) => ({ name: 'math', arguments: { task: `Compute part ${n}.` } })),
        };
      if (isMain(request.system)) return { text: 'Both parts are done.' };
      if (isMath(request.system)) return { text: 'Part computed.', delayMs: 1_500 };
      return { text: 'unexpected' };
    });
    const env = await cadreEnv(model, 'oneslot_killed');
    const first = await startWorker(env, 'first', ['--concurrency', '1']);
    const asked = Promise.all(
      [1, 2, 3].map((n) => runCli(['ask', '--no-worker', '--json', `Compute the parts of ${n}.`], env)),
    );
    // Killed once it runs a sub-agent (its parents waiting, set aside or about to be); the other worker
    // (there, so the killed one's jobs are retried rather than given up) takes them and goes on.
    await first.waitFor(/took run job/);
    await startWorker(env, 'second', ['--concurrency', '1']);
    await first.kill();
    for (const result of await asked) {
      expect(complaints(result.stderr)).toBe('');
      expect(JSON.parse(result.stdout).answer).toBe('Both parts are done.');
    }
  }, 90_000);

  it('one worker with one slot finishes a tree three levels deep: each waiting parent is set aside and put back by its last child', async () => {
    const model = await startOpenAIServer((request) => {
      const fromTool = !lastIsUser(request);
      if (isMain(request.system))
        return fromTool
          ? { text: 'The job is done.' }
          : { toolCalls: [{ name: 'lead', arguments: { task: 'Do the job in four parts.' } }] };
      if (request.system.includes('You split work into parts.'))
        return fromTool
          ? { text: 'All four parts computed.' }
          : {
              toolCalls: [1, 2, 3, 4].map((n) => ({
                name: 'math',
                arguments: { task: `Compute part ${n}.` },
              })),
            };
      if (isMath(request.system)) return { text: 'Part computed.', delayMs: 1_200 };
      return { text: 'unexpected' };
    });
    const env = await cadreEnv(model, 'deep');
    mkdirSync(join(env.CADRE_HOME, 'agents'), { recursive: true });
    // Sub-agents may delegate once more (the default lets only main delegate).
    writeFileSync(join(env.CADRE_HOME, 'config.json'), JSON.stringify({ limits: { maxDepth: 2 } }));
    writeFileSync(
      join(env.CADRE_HOME, 'agents', 'lead.md'),
      '---\nname: lead\ndescription: Splits a job into parts and has math compute each.\ntools: math\n---\nYou split work into parts.\n',
    );
    const solo = await startWorker(env, 'solo', ['--concurrency', '1']);
    const asked = await runCli(['ask', '--no-worker', '--json', 'Do the job.'], env);
    expect(complaints(asked.stderr)).toBe('');
    const result = JSON.parse(asked.stdout) as { answer: string; run: RunTree };
    expect(result.answer).toBe('The job is done.');
    const [lead] = result.run.children;
    expect([lead?.agent, lead?.status]).toEqual(['lead', 'ok']);
    expect(lead?.children.map((child) => [child.agent, child.status])).toEqual(Array(4).fill(['math', 'ok']));
    // main and lead each gave their job up while they waited, and went on from their journals.
    expect(solo.output()).toMatch(/set aside tree job \S+ while 1 sub-agent run\(s\) it waits on go on/);
    expect(solo.output()).toMatch(/set aside run job \S+ while 4 sub-agent run\(s\) it waits on go on/);
    expect(solo.output()).toMatch(/took run job \S+ \(resumed\)/);
    expect(solo.output()).toMatch(/took tree job \S+ \(resumed\)/);
    // Each run lists each of its calls once, answered: going on from the journal told no call twice.
    const runsOf = (tree: RunTree): RunTree[] => [tree, ...tree.children.flatMap(runsOf)];
    for (const run of runsOf(result.run)) {
      const ids = run.toolCalls.map((call) => call.id);
      expect(new Set(ids).size, `${run.agent}'s calls ${ids.join(', ')}`).toBe(ids.length);
      expect(run.toolCalls.filter((call) => call.ok !== true)).toEqual([]);
    }
    const store = storeReader(env);
    const [told] = await store.rows<{ n: string }>(
      "SELECT COUNT(*) AS n FROM events WHERE type = 'tool-call' GROUP BY run_id, body::jsonb->>'toolCallId' ORDER BY 1 DESC LIMIT 1",
    );
    await store.close();
    expect(Number(told?.n)).toBe(1);
    // No step asked twice: main and lead each asked twice (before and after their sub-agents), math once each.
    const asks = (test: (system: string) => boolean) =>
      model.requests.filter((request) => test(request.system)).length;
    expect(asks(isMain)).toBe(2);
    expect(asks((system) => system.includes('You split work into parts.'))).toBe(2);
    expect(asks(isMath)).toBe(4);
  }, 90_000);

  it("a worker runs a tree with the asker's limits (its config's maxDepth), not its own config's", async () => {
    const model = await startOpenAIServer((request) => {
      const fromTool = !lastIsUser(request);
      if (isMain(request.system))
        return fromTool
          ? { text: 'The job is done.' }
          : { toolCalls: [{ name: 'lead', arguments: { task: 'Have math compute it.' } }] };
      if (request.system.includes('You split work into parts.'))
        return fromTool
          ? { text: 'Computed.' }
          : { toolCalls: [{ name: 'math', arguments: { task: 'Compute it.' } }] };
      if (isMath(request.system)) return { text: 'Part computed.' };
      return { text: 'unexpected' };
    });
    const env = await cadreEnv(model, 'asker_limits');
    // The worker has a home of its own (the same agents, no config): only the asker allows depth two.
    const workerEnv = { ...env, CADRE_HOME: tempHome() };
    const lead =
      '---\nname: lead\ndescription: Has math compute a part.\ntools: math\n---\nYou split work into parts.\n';
    for (const home of [env.CADRE_HOME, workerEnv.CADRE_HOME]) {
      mkdirSync(join(home, 'agents'), { recursive: true });
      writeFileSync(join(home, 'agents', 'lead.md'), lead);
    }
    writeFileSync(join(env.CADRE_HOME, 'config.json'), JSON.stringify({ limits: { maxDepth: 2 } }));
    await startWorker(workerEnv, 'solo', ['--concurrency', '2']);
    const asked = await runCli(['ask', '--no-worker', '--json', 'Do the job.'], env);
    expect(complaints(asked.stderr)).toBe('');
    const result = JSON.parse(asked.stdout) as { answer: string; run: RunTree };
    const [leadRun] = result.run.children;
    expect(leadRun?.children.map((child) => [child.agent, child.status])).toEqual([['math', 'ok']]);
    expect(result.answer).toBe('The job is done.');
  }, 60_000);

  it('a worker runs a tree on the models its asker composed it with, not its own CADRE_MODEL', async () => {
    const model = await startOpenAIServer((request) => {
      if (isMain(request.system) && lastIsUser(request))
        return { toolCalls: [{ name: 'math', arguments: { task: 'Compute 6 * 7.' } }] };
      if (isMain(request.system)) return { text: 'It is 42.' };
      if (isMath(request.system)) return { text: '42' };
      return { text: 'unexpected' };
    });
    const env = { ...(await cadreEnv(model, 'asker_models')), CADRE_MODEL: 'compatible:asked-model' };
    await startWorker({ ...env, CADRE_MODEL: 'compatible:worker-model' }, 'solo', ['--concurrency', '1']);
    const asked = await runCli(['ask', '--no-worker', '--json', 'What is 6 times 7?'], env);
    expect(JSON.parse(asked.stdout).answer).toBe('It is 42.');
    expect(new Set(model.requests.map((request) => request.body.model))).toEqual(new Set(['asked-model']));
    expect(model.requests).toHaveLength(3);
  }, 60_000);

  it('a worker runs a tree with the agents its asker composed, including one written after the worker started', async () => {
    const model = await startOpenAIServer((request) => {
      const fromTool = !lastIsUser(request);
      if (isMain(request.system))
        return fromTool
          ? { text: 'The glossary says so.' }
          : { toolCalls: [{ name: 'glossary', arguments: { task: 'Define tide.' } }] };
      if (request.system.includes('You define words from the tide glossary.'))
        return { text: 'A tide is the rise and fall of the sea.' };
      return { text: 'unexpected' };
    });
    const env = await cadreEnv(model, 'asker_agents');
    // The worker started before the agent file existed, in a home of its own: it has never read it.
    const workerEnv = { ...env, CADRE_HOME: tempHome() };
    const worker = await startWorker(workerEnv, 'solo', ['--concurrency', '2']);
    mkdirSync(join(env.CADRE_HOME, 'agents'), { recursive: true });
    writeFileSync(
      join(env.CADRE_HOME, 'agents', 'glossary.md'),
      '---\nname: glossary\ndescription: Defines words.\n---\nYou define words from the tide glossary.\n',
    );
    const asked = await runCli(['ask', '--no-worker', '--json', 'What is a tide?'], env);
    expect(complaints(asked.stderr)).toBe('');
    const result = JSON.parse(asked.stdout) as { answer: string; run: RunTree };
    expect(result.run.children.map((child) => [child.agent, child.status])).toEqual([['glossary', 'ok']]);
    expect(result.answer).toBe('The glossary says so.');

    // Built once for the carried agents: a second question reuses them.
    const again = await runCli(['ask', '--no-worker', '--json', 'What is a tide?'], env);
    expect(JSON.parse(again.stdout).answer).toBe('The glossary says so.');
    expect(worker.output()).not.toMatch(/no tool/);
  }, 60_000);

  it("a parent's time limit holds while its job is set aside: its sub-agent is stopped then, and it ends timeout", async () => {
    const model = await startOpenAIServer((request) => {
      const fromTool = !lastIsUser(request);
      const toolResults = request.body.messages.filter((message) => message.role === 'tool').length;
      // main asks math twice, one step after the other: the first answers at once, the second never does.
      if (isMain(request.system) && toolResults < 2)
        return { toolCalls: [{ name: 'math', arguments: { task: `Part ${toolResults + 1}.` } }] };
      if (isMain(request.system)) return { text: 'unexpected: main asked a third time' };
      if (
        isMath(request.system) &&
        !fromTool &&
        request.body.messages.some((m) => JSON.stringify(m).includes('Part 1.'))
      )
        return { text: 'Part 1 is 6.' };
      return { hang: true };
    });
    const env = await cadreEnv(model, 'deadline');
    const solo = await startWorker(env, 'solo', ['--concurrency', '1']);
    const started = Date.now();
    const asked = await runCli(['ask', '--no-worker', '--json', '--timeout', '3', 'Do both parts.'], env);
    const tookMs = Date.now() - started;
    const result = JSON.parse(asked.stdout) as { run: RunTree };
    expect(solo.output()).toMatch(/set aside tree job \S+ while 1 sub-agent run\(s\) it waits on go on/);
    expect(result.run.status).toBe('timeout');
    expect(result.run.error).toMatch(/time limit of 3 s/);
    expect(result.run.children.map((child) => child.status)).toEqual(['ok', 'cancelled']);
    // Stopped at the deadline, not at the sub-agent's own (much longer) limit.
    expect(tookMs).toBeLessThan(12_000);
    expect(Date.parse(result.run.endedAt!) - Date.parse(result.run.startedAt)).toBeLessThan(6_000);
    // Put back past its deadline, main ended while it still replayed: its end is stored, once.
    const store = storeReader(env);
    const ends = await store.rows<{ type: string }>(
      `SELECT type FROM events WHERE run_id = '${result.run.id}' AND type IN ('run-error', 'run-finish')`,
    );
    await store.close();
    expect(ends.map((end) => end.type).sort()).toEqual(['run-error', 'run-finish']);
  }, 60_000);

  it('Ctrl-C on the asking terminal while its parent is set aside: the tree ends cancelled and the terminal exits', async () => {
    const model = await startOpenAIServer((request) => {
      if (isMain(request.system) && lastIsUser(request))
        return { toolCalls: [{ name: 'math', arguments: { task: 'What is 6 times 7?' } }] };
      if (isMain(request.system)) return { text: 'unexpected: main asked again' };
      return { hang: true };
    });
    const env = await cadreEnv(model, 'interrupt');
    const solo = await startWorker(env, 'solo', ['--concurrency', '1']);
    let stoppedAt = 0;
    const asked = await runCli(['ask', '--no-worker', '--json', 'What is 6 times 7?'], env, {
      onSpawn: (child) =>
        void solo
          .waitFor(/set aside tree job/)
          .then(() => {
            stoppedAt = Date.now();
            child.kill('SIGINT');
          })
          // Never set aside: stopped anyway, and `stoppedAt` says so.
          .catch(() => child.kill('SIGKILL')),
    });
    expect(stoppedAt).toBeGreaterThan(0);
    expect(Date.now() - stoppedAt).toBeLessThan(10_000);
    const root = JSON.parse(asked.stdout) as { run: RunTree };
    expect(root.run.status).toBe('cancelled');
    expect(root.run.children.map((child) => child.status)).toEqual(['cancelled']);
  }, 60_000);

  it('Ctrl-C while no worker runs: the tree comes off the queue, the terminal exits at once, and no worker runs it later', async () => {
    const model = await startOpenAIServer((request) =>
      isMain(request.system) ? { text: `Answered: ${request.body.messages.at(-1)?.content}` } : { text: '?' },
    );
    const env = await cadreEnv(model, 'withdrawn');
    const store = storeReader(env);
    const jobsSchema = `${new URL(env.CADRE_DATABASE_URL).searchParams.get('options')?.split('=')[1]}_jobs`;
    // (0 until the asking process has made the queue's schema: the first looks may come before it.)
    const treeJobs = (state: string) =>
      store
        .count(`SELECT COUNT(*) AS n FROM ${jobsSchema}.job WHERE name = 'cadre-tree' AND state = '${state}'`)
        .catch(() => 0);
    let stoppedAt = 0;
    try {
      const asked = await runCli(['ask', '--no-worker', '--json', 'First question.'], env, {
        onSpawn: (child) =>
          void (async () => {
            // Stopped once its tree waits on the queue.
            while (!(await treeJobs('created'))) await new Promise((resolve) => setTimeout(resolve, 50));
            stoppedAt = Date.now();
            child.kill('SIGINT');
          })(),
      });
      expect(stoppedAt).toBeGreaterThan(0);
      expect(Date.now() - stoppedAt).toBeLessThan(5_000);
      expect(asked.code).toBe(130);
      const result = JSON.parse(asked.stdout) as { run: RunTree };
      expect(result.run.status).toBe('cancelled');
      expect(await treeJobs('cancelled')).toBe(1);
      // A worker started later runs the next question, and never the withdrawn one.
      await startWorker(env, 'late', ['--concurrency', '1']);
      const next = await runCli(['ask', '--no-worker', '--json', 'Second question.'], env);
      expect(JSON.parse(next.stdout).answer).toBe('Answered: Second question.');
      expect(model.requests.map((request) => request.body.messages.at(-1)?.content)).toEqual([
        'Second question.',
      ]);
    } finally {
      await store.close();
    }
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
    // Handed back as it was: not counted as a failed try.
    expect(second.output()).toMatch(/took tree job \S+ \(resumed\)/);
    expect(second.output()).not.toMatch(/\(try \d\)/);
  }, 90_000);
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
