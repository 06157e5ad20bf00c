/**
 * A question waiting on the queue whose asking process has died (SIGKILL: nothing of it runs any more):
 * a stop asked of it then (`cadre runs stop`, another process) and its asker's `queue.waitTimeoutSeconds`
 * still hold, because they are read from the database by the worker that takes it later (started only
 * after both), which closes its root without running any of it and stores the answer in its session.
 */

import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { startOpenAIServer } from '../fixtures/openai-server.ts';
import { fixtureModelEnv, runCli } from '../helpers/cli.ts';
import { eventually } from '../helpers/eventually.ts';
import { freshSchema, startWorker, TEST_DATABASE_URL } from '../helpers/postgres.ts';

type Listed = { runs: Array<{ id: string; status: string; summary: string }> };

/** Asks with no worker, and SIGKILLs the asker once its tree waits on the queue; its root id and session. */
async function askThenDie(env: Record<string, string> & { CADRE_DATABASE_URL: string }, question: string) {
  const store = await openPostgresStore(env.CADRE_DATABASE_URL);
  onTestFinished(() => store.close());
  let asker: ChildProcess | undefined;
  const exited = runCli(['ask', '--no-worker', '--json', question], env, {
    onSpawn: (child) => {
      asker = child;
    },
  });
  const waiting = await eventually(async () => {
    const [session] = await store.sessions.list('local').catch(() => []);
    if (!session) return undefined;
    const tree = await (await store.jobs!()).waitingTree('local', session.id).catch(() => undefined);
    return tree && { rootRunId: tree.rootRunId, sessionId: session.id, queuedAt: Date.now() };
  }, 'the question waiting on the queue');
  asker!.kill('SIGKILL');
  expect((await exited).signal).toBe('SIGKILL');
  const answers = async () =>
    (await store.sessions.get('local', waiting.sessionId))!.messages
      .filter((message) => message.role === 'assistant')
      .map((message) => message.content);
  return { ...waiting, answers };
}

/** The root run `rootRunId` once it has ended, as `cadre runs list` shows it. */
async function ended(env: Record<string, string>, rootRunId: string) {
  return eventually(async () => {
    const listed = JSON.parse((await runCli(['runs', 'list', '--json'], env)).stdout) as Listed;
    const run = listed.runs.find((entry) => entry.id === rootRunId);
    return run && run.status !== 'running' ? run : undefined;
  }, `run ${rootRunId} ended`);
}

describe.skipIf(!TEST_DATABASE_URL)('a waiting question whose asker died', () => {
  it('stopped after its asker died: a worker started later does not run it, and records it cancelled', async () => {
    const model = await startOpenAIServer(() => ({ text: 'Answered.' }));
    const env = { ...fixtureModelEnv(model), CADRE_DATABASE_URL: await freshSchema('dead_stop') };
    const asked = await askThenDie(env, 'Anyone there?');
    // Nothing has run it yet: no run row, so the stop goes to the waiting job.
    const stopped = await runCli(['runs', 'stop', asked.rootRunId], env);
    expect(stopped.code).toBe(0);

    const worker = await startWorker(env, 'late', ['--concurrency', '1']);
    await worker.waitFor(/took tree job/);
    const run = await ended(env, asked.rootRunId);
    expect(run).toMatchObject({
      status: 'cancelled',
      summary: 'Cancelled before any worker took it (stopped by the person); nothing ran.',
    });
    expect(await eventually(async () => (await asked.answers()).at(0), 'its answer in the session')).toMatch(
      /Cancelled before any worker took it/,
    );
    expect(model.requests).toEqual([]);
    // The next question is answered by that worker: it was not stopped with it.
    const next = await runCli(['ask', '--no-worker', 'Anyone now?'], env);
    expect(next.stdout).toBe('Answered.\n');
    expect(model.requests).toHaveLength(1);
  }, 90_000);

  it('its asker dead, a question older than queue.waitTimeoutSeconds is not run by a worker started later: timeout', async () => {
    const model = await startOpenAIServer(() => ({ text: 'Answered.' }));
    const env = { ...fixtureModelEnv(model), CADRE_DATABASE_URL: await freshSchema('dead_ttl') };
    writeFileSync(join(env.CADRE_HOME, 'config.json'), JSON.stringify({ queue: { waitTimeoutSeconds: 2 } }));
    const asked = await askThenDie(env, 'Anyone there?');
    // The deliberate wait: past the time it may wait for a worker.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, asked.queuedAt + 2_500 - Date.now())));

    const worker = await startWorker(env, 'late', ['--concurrency', '1']);
    await worker.waitFor(/took tree job/);
    const run = await ended(env, asked.rootRunId);
    expect(run.status).toBe('timeout');
    expect(run.summary).toMatch(/^No worker took this question within 2 s \(queue\.waitTimeoutSeconds\)/);
    expect(await eventually(async () => (await asked.answers()).at(0), 'its answer in the session')).toMatch(
      /No worker took this question within 2 s/,
    );
    expect(model.requests).toEqual([]);
  }, 90_000);
});
