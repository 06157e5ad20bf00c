/**
 * A background sub-agent as jobs on PostgreSQL: the background run is a job like any sub-agent, and its
 * delivery to the main agent survives the death of the worker running both: another worker goes on with
 * both jobs from the journal, and the main agent answers the background result once, in a new turn.
 * Real processes and a real database (CADRE_TEST_DATABASE_URL; CI starts one).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunTree } from '../../src/core/run-tree.ts';
import { isScout, SCOUT, said } from '../fixtures/background-agent.ts';
import { contentText, startOpenAIServer } from '../fixtures/openai-server.ts';
import { complaints, fixtureModelEnv, runCli } from '../helpers/cli.ts';
import { freshSchema, startWorker, TEST_DATABASE_URL } from '../helpers/postgres.ts';
import { isMain } from '../web/web-app-setup.ts';

describe.skipIf(!TEST_DATABASE_URL)('a background sub-agent as jobs', () => {
  it('a worker killed while the background run works: another worker delivers its result once', async () => {
    let releaseScout: (value?: unknown) => void = () => {};
    const scoutMay = new Promise((resolve) => {
      releaseScout = resolve;
    });
    const model = await startOpenAIServer((request) => {
      const { body, system } = request;
      const last = body.messages.at(-1);
      if (isMain(system)) {
        if (!body.messages.some((message) => message.role === 'tool'))
          return { toolCalls: [{ name: 'scout', arguments: { task: 'Find the answer.' } }] };
        if (last?.role === 'tool') return { text: 'Scout is on it.' };
        if (contentText(last?.content).includes('Are you there?'))
          return { text: 'Yes, scout is still looking.' };
        return { text: contentText(last?.content).includes('Found 42') ? 'Scout found 42.' : 'unexpected' };
      }
      // Held until the worker running it has been killed.
      if (isScout(system)) return { text: 'Found 42', until: scoutMay };
      return { text: 'unexpected' };
    });
    const env = { ...fixtureModelEnv(model), CADRE_DATABASE_URL: await freshSchema('background_kill') };
    mkdirSync(join(env.CADRE_HOME, 'agents'), { recursive: true });
    writeFileSync(join(env.CADRE_HOME, 'agents', 'scout.md'), SCOUT);
    try {
      const first = await startWorker(env, 'first', ['--concurrency', '2']);
      const asking = runCli(['ask', '--no-worker', '--json', 'What is the answer?'], env);
      // Main has answered and waits for scout, which waits on its model: both on `first`.
      const mainAnswered = () =>
        model.requests.some(
          (request) => isMain(request.system) && request.body.messages.at(-1)?.role === 'tool',
        );
      while (!mainAnswered() || !model.requests.some((request) => isScout(request.system)))
        await new Promise((resolve) => setTimeout(resolve, 50));
      const second = await startWorker(env, 'second', ['--concurrency', '2']);
      await first.kill();
      releaseScout();
      await second.waitFor(/took run job/, 40_000);
      const asked = await asking;
      expect(complaints(asked.stderr)).not.toMatch(/error/i);
      expect(asked.code).toBe(0);
      const result = JSON.parse(asked.stdout) as { answer: string; run: RunTree };
      expect(result.answer).toBe('Scout is on it.\n\nScout found 42.');
      const [scout] = result.run.children;
      expect(scout).toMatchObject({ agent: 'scout', status: 'ok', background: true, worker: 'second' });
      // Delivered once: main's new turn saw scout's result once, and was asked for it once.
      const newTurns = model.requests.filter(
        (request) => isMain(request.system) && said(request).includes('Found 42'),
      );
      expect(newTurns).toHaveLength(1);
      expect(said(newTurns[0]!).split('Found 42').length - 1).toBe(1);
      // Main's committed delegation step was not asked again.
      const delegating = model.requests.filter(
        (request) =>
          isMain(request.system) &&
          request.body.messages.at(-1)?.role === 'user' &&
          !said(request).includes('has finished'),
      );
      expect(delegating).toHaveLength(1);
    } finally {
      await model.close();
    }
  }, 120_000);

  it('a main agent whose worker was killed, replayed on another, still hears the person while it waits', async () => {
    let releaseScout: (value?: unknown) => void = () => {};
    const scoutMay = new Promise((resolve) => {
      releaseScout = resolve;
    });
    const model = await startOpenAIServer((request) => {
      const { body, system } = request;
      const last = body.messages.at(-1);
      if (isMain(system)) {
        if (!body.messages.some((message) => message.role === 'tool'))
          return { toolCalls: [{ name: 'scout', arguments: { task: 'Find the answer.' } }] };
        if (last?.role === 'tool') return { text: 'Scout is on it.' };
        if (contentText(last?.content).includes('Are you there?'))
          return { text: 'Yes, scout is still looking.' };
        return { text: contentText(last?.content).includes('Found 42') ? 'Scout found 42.' : 'unexpected' };
      }
      if (isScout(system)) return { text: 'Found 42', until: scoutMay };
      return { text: 'unexpected' };
    });
    const env = { ...fixtureModelEnv(model), CADRE_DATABASE_URL: await freshSchema('background_say') };
    mkdirSync(join(env.CADRE_HOME, 'agents'), { recursive: true });
    writeFileSync(join(env.CADRE_HOME, 'agents', 'scout.md'), SCOUT);
    try {
      const first = await startWorker(env, 'first', ['--concurrency', '2']);
      const asking = runCli(['ask', '--no-worker', '--json', 'What is the answer?'], env);
      const mainAnswered = () =>
        model.requests.some(
          (request) => isMain(request.system) && request.body.messages.at(-1)?.role === 'tool',
        );
      while (!mainAnswered() || !model.requests.some((request) => isScout(request.system)))
        await new Promise((resolve) => setTimeout(resolve, 50));
      const second = await startWorker(env, 'second', ['--concurrency', '2']);
      await first.kill();
      // The main agent's job goes on on `second`: it replays its steps and waits for scout again.
      await second.waitFor(/took tree job/, 40_000);
      const listed = JSON.parse((await runCli(['runs', 'list', '--json'], env)).stdout) as {
        runs: Array<{ id: string }>;
      };
      expect((await runCli(['runs', 'say', listed.runs[0]!.id, 'Are you there?'], env)).code).toBe(0);
      const heard = () =>
        model.requests.some((request) => isMain(request.system) && said(request).includes('Are you there?'));
      for (let waited = 0; !heard(); waited += 50) {
        if (waited > 30_000) throw new Error('the main agent never heard the person');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      releaseScout();
      const asked = await asking;
      expect(asked.code).toBe(0);
      expect((JSON.parse(asked.stdout) as { answer: string }).answer).toBe(
        'Yes, scout is still looking.\n\nScout found 42.',
      );
    } finally {
      await model.close();
    }
  }, 120_000);
});
