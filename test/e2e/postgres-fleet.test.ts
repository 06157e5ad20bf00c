/**
 * The fleet as an operator sees it on PostgreSQL, through `cadre workers` and `cadre queue`: two real
 * workers, one holding a run whose model call hangs (its lease and heartbeats healthy: flagged stuck) and
 * one killed with SIGKILL (gone, its job back on the queue); then a tree no worker could start (an agent
 * using a tool of an MCP server only the asker has), kept as a dead letter with a run saying why, retried with one
 * command once a worker has the key, and a dead letter dropped.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { QueueReport, WorkersReport } from '../../src/app/fleet.ts';
import { JOB_FORMAT } from '../../src/app/jobs/job-data.ts';
import type { RunTree } from '../../src/core/run-tree.ts';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { startOpenAIServer } from '../fixtures/openai-server.ts';
import { fixtureModelEnv, runCli, tempHome } from '../helpers/cli.ts';
import { eventually } from '../helpers/eventually.ts';
import { freshSchema, startWorker, TEST_DATABASE_URL } from '../helpers/postgres.ts';
import { startServe } from '../helpers/serve.ts';

const FLAKY_SERVER = fileURLToPath(new URL('../fixtures/mcp/flaky-server.ts', import.meta.url));

type Workers = Extract<WorkersReport, { queue: true }>;

async function workers(env: Record<string, string>, args: string[] = []) {
  const result = await runCli(['workers', '--json', ...args], env);
  return { code: result.code, report: JSON.parse(result.stdout) as Workers };
}

async function queue(env: Record<string, string>): Promise<QueueReport> {
  return JSON.parse((await runCli(['queue', '--json'], env)).stdout) as QueueReport;
}

/** Asks `cadre workers` again until `done` holds of its report (each look is a whole process). */
async function workersUntil(
  env: Record<string, string>,
  args: string[],
  done: (report: Workers) => boolean,
): Promise<{ code: number | null; report: Workers }> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const seen = await workers(env, args);
    if (done(seen.report)) return seen;
    if (Date.now() > deadline) throw new Error(`never seen: ${JSON.stringify(seen.report, null, 2)}`);
  }
}

describe.skipIf(!TEST_DATABASE_URL)('operating a fleet on PostgreSQL', () => {
  it('cadre workers flags a stuck worker and drops a killed one; cadre queue shows its job waiting again', async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const model = await startOpenAIServer(() => ({ until: held, text: 'Answered.' }));
    const env = { ...fixtureModelEnv(model), CADRE_DATABASE_URL: await freshSchema('fleet') };
    const stuck = await startWorker(env, 'stuck-one', ['--concurrency', '1']);
    const first = runCli(['ask', '--no-worker', '--json', 'First question.'], env);
    await stuck.waitFor(/took tree job/);
    const doomed = await startWorker(env, 'doomed', ['--concurrency', '1']);
    const second = runCli(['ask', '--no-worker', '--json', 'Second question.'], env);
    await doomed.waitFor(/took tree job/);

    // Both hold a run whose model never answers: silent past a second, each is flagged.
    const seen = await workersUntil(env, ['--silent-after', '1'], (report) =>
      report.workers.every((worker) => worker.stuck && worker.slots.used === 1),
    );
    expect(seen.code).toBe(1);
    expect(seen.report.silentAfterSeconds).toBe(1);
    const stuckView = seen.report.workers.find((worker) => worker.name === 'stuck-one')!;
    expect(stuckView).toMatchObject({
      alive: true,
      standing: true,
      pid: stuck.child.pid,
      slots: { total: 1, used: 1, free: 0 },
    });
    expect(stuckView.jobs).toHaveLength(1);
    expect(stuckView.jobs[0]).toMatchObject({ kind: 'tree', silent: true });
    expect(stuckView.jobs[0]!.silentSeconds).toBeGreaterThanOrEqual(1);
    // Under the default threshold (120 s) nothing is flagged yet.
    const calm = await workers(env);
    expect(calm.code).toBe(0);
    expect(calm.report.workers.map((worker) => worker.stuck)).toEqual([false, false]);
    const text = await runCli(['workers', '--silent-after', '1'], env);
    expect(text.stdout).toMatch(/^2 worker\(s\) alive/);
    expect(text.stdout).toMatch(/stuck-one .* pid \d+ {2}slots 1 used, 0 free of 1 .*STUCK/);

    // Killed: its lease goes with it; the other worker hands its job back to the queue, where it waits.
    await doomed.kill();
    const after = await workersUntil(
      env,
      [],
      (report) => !report.workers.some((worker) => worker.name === 'doomed' && worker.alive),
    );
    expect(after.report.workers.filter((worker) => worker.alive).map((worker) => worker.name)).toEqual([
      'stuck-one',
    ]);
    let waiting: QueueReport | undefined;
    for (let look = 0; look < 30; look++) {
      waiting = await queue(env);
      if (waiting.depth.some((entry) => entry.kind === 'tree' && entry.state !== 'active')) break;
    }
    expect(waiting!.depth.filter((entry) => entry.kind === 'tree')).toEqual(
      expect.arrayContaining([
        { kind: 'tree', state: 'active', count: 1 },
        { kind: 'tree', state: 'retry', count: 1 },
      ]),
    );
    expect(waiting!.failures).toEqual([]);
    const queueText = (await runCli(['queue'], env)).stdout;
    expect(queueText).toMatch(/^tree jobs: .*1 active/m);
    expect(queueText).toMatch(/^failed on every try \(dead letters\): 0$/m);

    // Let the model answer: the stuck worker finishes its question, then the killed one's.
    release();
    for (const asked of [await first, await second]) {
      expect(asked.code).toBe(0);
      expect(JSON.parse(asked.stdout).answer).toBe('Answered.');
    }
    expect(stuck.output()).toMatch(/took tree job \S+ \(try 2\)/);
    const idle = await workersUntil(env, ['--silent-after', '1'], (report) =>
      report.workers.every((worker) => !worker.jobs.length && worker.slots.used === 0),
    );
    expect(idle.code).toBe(0);
  }, 120_000);

  it('a tree no worker can start is a dead letter with a run saying why; queue retry runs it, queue drop forgets one', async () => {
    const model = await startOpenAIServer(() => ({ text: 'Answered after all.' }));
    const env = { ...fixtureModelEnv(model), CADRE_DATABASE_URL: await freshSchema('fleet_dead') };
    // The asker's agent uses a tool of an MCP server only the asker has; the worker, in a home of its own,
    // has none.
    const mcpConfig = JSON.stringify({
      mcpServers: { flaky: { command: process.execPath, args: [FLAKY_SERVER] } },
    });
    writeFileSync(join(env.CADRE_HOME, 'config.json'), mcpConfig);
    mkdirSync(join(env.CADRE_HOME, 'agents'), { recursive: true });
    writeFileSync(
      join(env.CADRE_HOME, 'agents', 'probe.md'),
      '---\nname: probe\ndescription: Asks the server its pid.\ntools: [mcp__flaky__pid]\n---\nYou ask.\n',
    );
    const worker = await startWorker({ ...env, CADRE_HOME: tempHome() }, 'without-mcp', [
      '--concurrency',
      '1',
    ]);
    for (const question of ['What is 3+3?', 'What is 2+2?']) {
      const asked = await runCli(['ask', '--no-worker', '--json', question], env);
      expect(asked.code).not.toBe(0);
      expect(`${asked.stdout}${asked.stderr}`).toMatch(/no tool "mcp__flaky__pid"/);
    }

    let report: QueueReport | undefined;
    for (let look = 0; look < 30 && report?.failures.length !== 2; look++) report = await queue(env);
    expect(report!.failures).toHaveLength(2);
    const [dead, older] = report!.failures as [
      QueueReport['failures'][number],
      QueueReport['failures'][number],
    ];
    // Dropped: an operator dealt with it.
    const dropped = await runCli(['queue', 'drop', older.rootRunId], env);
    expect(dropped.stdout).toBe(`Dropped tree job ${older.jobId} (run ${older.rootRunId}).\n`);
    expect(dead).toMatchObject({ kind: 'tree', userId: 'local', tries: 3 });
    expect(dead.error).toMatch(/This worker has no tool "mcp__flaky__pid", which agent "probe"/);
    // Its tries as pg-boss counts them, each said in the worker's log.
    expect(worker.output()).toMatch(new RegExp(`took tree job ${dead.jobId} \\(try 3\\)`));
    expect(worker.output()).not.toMatch(/\(try 4\)/);

    // The tree never started, yet it has a run saying why (written once the dead letter is recorded).
    let run: RunTree | undefined;
    for (let look = 0; look < 30 && run?.status !== 'error'; look++) {
      const shown = await runCli(['runs', 'show', dead.rootRunId, '--json'], env);
      if (shown.code === 0) run = JSON.parse(shown.stdout) as RunTree;
    }
    expect(run).toMatchObject({ id: dead.rootRunId, status: 'error' });
    expect(run!.summary).toMatch(/^Failed on every worker that took it: This worker has no tool/);
    // Its session says so as well, under the question.
    const sessions = JSON.parse((await runCli(['sessions', 'list', '--json'], env)).stdout) as {
      sessions: Array<{ id: string; title: string }>;
    };
    const sessionId = sessions.sessions.find((session) => session.title.includes('2+2'))!.id;
    const store = await openPostgresStore(env.CADRE_DATABASE_URL);
    onTestFinished(() => store.close());
    const replies = async () =>
      (await store.sessions.get('local', sessionId))!.messages
        .filter((message) => message.role === 'assistant')
        .map((message) => message.content);
    for (let look = 0; look < 30 && !(await replies()).length; look++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await replies()).toEqual([expect.stringMatching(/^Failed on every worker that took it/)]);
    expect((await runCli(['queue'], env)).stdout).toMatch(
      /dead letters\): 1\n {2}tree job \S+ {2}run \S+ of local {2}3 tries, failed \S+\n {4}This worker has no tool/,
    );

    // A worker with the MCP server: one command retries the tree from its journal, for the person who asked.
    await worker.kill();
    const equipped = tempHome();
    writeFileSync(join(equipped, 'config.json'), mcpConfig);
    await startWorker({ ...env, CADRE_HOME: equipped }, 'with-mcp', ['--concurrency', '1']);
    const retried = await runCli(['queue', 'retry', dead.jobId, '--json'], env);
    expect(retried.stderr).toMatch(
      new RegExp(`retrying tree job ${dead.jobId}: run ${dead.rootRunId} goes on as run_`),
    );
    expect(retried.code).toBe(0);
    expect(JSON.parse(retried.stdout)).toMatchObject({ answer: 'Answered after all.', status: 'ok' });
    expect(await replies()).toEqual([
      expect.stringMatching(/^Failed on every worker that took it/),
      'Answered after all.',
    ]);
    expect((await queue(env)).failures).toEqual([]);
    // Only a dead letter is retried or dropped.
    const again = await runCli(['queue', 'drop', dead.jobId], env);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/There is no job/);
    const running = await runCli(['queue', 'retry', 'no-such-job'], env);
    expect(running.code).toBe(2);
  }, 120_000);

  it('queue retry resumes a tree that died after its root began: its committed step is not asked again', async () => {
    // main's first step calls calculate (a committed step); every later step's model call hangs until the
    // test lets it answer, and the worker holding it is killed there, three times: a dead letter.
    let answering = false;
    const model = await startOpenAIServer((request) => {
      const results = request.body.messages.filter((message) => message.role === 'tool');
      if (!results.length) return { toolCalls: [{ name: 'calculate', arguments: { expression: '6 * 7' } }] };
      return answering ? { text: 'It is 42, as calculated.' } : { hang: true };
    });
    onTestFinished(() => model.close());
    const env = { ...fixtureModelEnv(model), CADRE_DATABASE_URL: await freshSchema('fleet_dead_begun') };
    const secondSteps = () =>
      model.requests.filter((request) => request.body.messages.at(-1)?.role === 'tool');
    // Two workers at all times: a job whose worker dies with no other alive is given up (its tree closed
    // interrupted), not retried; with one alive, the death counts as a failed try and it is taken again.
    const live = [
      await startWorker(env, 'doomed-a', ['--concurrency', '1']),
      await startWorker(env, 'doomed-b', ['--concurrency', '1']),
    ];
    const asked = runCli(['ask', '--no-worker', '--json', 'What is 6 * 7?'], env);
    for (let attempt = 1; attempt <= 3; attempt++) {
      await eventually(
        async () => (secondSteps().length === attempt ? true : undefined),
        `attempt ${attempt}'s second model call`,
      );
      // Its first try is logged without a count; the later ones say which try they are.
      const took =
        attempt === 1 ? /took tree job \S+\n/ : new RegExp(`took tree job \\S+ \\(try ${attempt}\\)`);
      const holder = live.find((worker) => took.test(worker.output()))!;
      expect(holder).toBeDefined();
      live.splice(live.indexOf(holder), 1);
      live.push(await startWorker(env, `doomed-${attempt}`, ['--concurrency', '1']));
      await holder.kill();
    }
    // A live worker reaps the third death: the job has had its three tries, and is a dead letter.
    const [dead] = await eventually(async () => {
      const { failures } = await queue(env);
      return failures.length ? failures : undefined;
    }, 'the dead letter');
    expect(dead).toMatchObject({ kind: 'tree', tries: 3 });
    expect(dead!.error).toMatch(/its worker \(pid \d+ on .+\) is gone/);
    const died = await asked;
    expect(died.code).not.toBe(0);
    const run = await eventually(async () => {
      const shown = await runCli(['runs', 'show', dead!.rootRunId, '--json'], env);
      const tree = shown.code === 0 ? (JSON.parse(shown.stdout) as RunTree) : undefined;
      return tree?.status === 'error' ? tree : undefined;
    }, 'the dead tree closed');
    // It had begun: its committed step (the calculation) is on record.
    expect(run.toolCalls).toMatchObject([{ name: 'calculate', ok: true }]);
    expect(
      model.requests.filter((request) => !request.body.messages.some((m) => m.role === 'tool')),
    ).toHaveLength(1);

    // One command retries it: it goes on from its journal, the first step's model call is not made again.
    answering = true;
    const retried = await runCli(['queue', 'retry', dead!.jobId, '--json'], env);
    expect(retried.stderr).toMatch(
      new RegExp(`retrying tree job ${dead!.jobId}: run ${dead!.rootRunId} goes on as run_`),
    );
    expect(retried.code).toBe(0);
    expect(JSON.parse(retried.stdout)).toMatchObject({ answer: 'It is 42, as calculated.', status: 'ok' });
    expect(
      model.requests.filter((request) => !request.body.messages.some((m) => m.role === 'tool')),
    ).toHaveLength(1);
    expect(secondSteps()).toHaveLength(4);
    // The answer's request carries the first attempt's calculation, as it was committed.
    expect(JSON.stringify(secondSteps().at(-1)!.body.messages)).toContain('42');
    // The session has the failure, then the answer.
    const store = await openPostgresStore(env.CADRE_DATABASE_URL);
    onTestFinished(() => store.close());
    const [session] = await store.sessions.list('local');
    const replies = (await store.sessions.get('local', session!.id))!.messages.filter(
      (message) => message.role === 'assistant',
    );
    expect(replies.map((message) => message.content)).toEqual([
      expect.stringMatching(/^Failed on every worker that took it/),
      'It is 42, as calculated.',
    ]);
    expect((await queue(env)).failures).toEqual([]);
  }, 180_000);

  it('a question no worker takes says it is queued (CLI, /v1), and is withdrawn after queue.waitTimeoutSeconds with the asker told', async () => {
    const model = await startOpenAIServer(() => ({ text: 'Answered.' }));
    const env = { ...fixtureModelEnv(model), CADRE_DATABASE_URL: await freshSchema('fleet_wait') };
    writeFileSync(join(env.CADRE_HOME, 'config.json'), JSON.stringify({ queue: { waitTimeoutSeconds: 5 } }));
    const asked = await runCli(['ask', '--no-worker', 'Anyone there?'], env);
    expect(asked.stderr).toMatch(/^cadre: queued: no worker has taken it yet\n/);
    expect(asked.stderr).toMatch(
      /No worker took this question within 5 s \(queue\.waitTimeoutSeconds\): it was withdrawn from the queue/,
    );
    expect(asked.code).toBe(3);
    // Its run says why; nothing waits in the queue any more, and no model was asked.
    const listed = JSON.parse((await runCli(['runs', 'list', '--json'], env)).stdout) as {
      runs: Array<{ status: string; summary: string }>;
    };
    expect(listed.runs[0]).toMatchObject({ status: 'timeout' });
    expect(listed.runs[0]!.summary).toMatch(/^No worker took this question within 5 s/);
    expect((await queue(env)).depth.filter((entry) => entry.state !== 'cancelled')).toEqual([]);
    expect(model.requests).toEqual([]);

    const server = await startServe(['--port', '0', '--no-worker'], env);
    onTestFinished(async () => {
      server.child.kill('SIGTERM');
      await server.exited;
    });
    const ask = (stream: boolean) =>
      fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'cadre', stream, messages: [{ role: 'user', content: 'Hello?' }] }),
      });
    const streamed = await ask(true);
    expect(streamed.status).toBe(200);
    const body = await streamed.text();
    // The OpenAI stream stays valid: its first chunk, a comment clients skip, an error chunk, [DONE].
    expect(body).toMatch(/^data: \{.*"role":"assistant".*\}\n\n: queued: no worker has taken it yet\n\n/);
    const error = /data: (\{"error".*\})\n\n/.exec(body)?.[1];
    expect(JSON.parse(error!).error).toMatchObject({ code: 'queue_timeout', type: 'server_error' });
    expect(body.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const plain = await ask(false);
    expect(plain.status).toBe(503);
    expect(JSON.stringify(await plain.json())).toMatch(/No worker took this question within 5 s/);

    // With a worker, nothing is said of a queue: it is taken at once.
    await startWorker(env, 'present', ['--concurrency', '1']);
    const answered = await runCli(['ask', '--no-worker', 'Anyone there?'], env);
    expect(answered.stderr).toBe('');
    expect(answered.stdout).toBe('Answered.\n');
  }, 120_000);

  it('an older worker leaves a job of a newer format queued, untried, and says why in its log', async () => {
    const model = await startOpenAIServer(() => ({ text: 'Answered.' }));
    const env = { ...fixtureModelEnv(model), CADRE_DATABASE_URL: await freshSchema('fleet_format') };
    // A newer Cadre's asker queued it: the same shape, a format this code does not know.
    const store = await openPostgresStore(env.CADRE_DATABASE_URL);
    onTestFinished(() => store.close());
    const jobs = await store.jobs();
    const spec = { agent: 'main', task: 'From the future.', history: [] };
    const data = {
      format: JOB_FORMAT + 1,
      journalId: 'jrn_future',
      userId: 'local',
      rootRunId: 'run_future',
      spec,
    };
    await jobs.enqueue('tree', 'tree:run_future', data);
    const worker = await startWorker(env, 'older', ['--concurrency', '1']);
    const jobId = jobs.jobId('tree:run_future');
    await worker.waitFor(/left tree job \S+ queued/);
    expect(worker.output()).toMatch(
      new RegExp(
        `left tree job ${jobId} queued: its format \\(${JOB_FORMAT + 1}\\) is newer than this worker understands \\(${JOB_FORMAT}\\): a newer Cadre queued it; upgrade this worker`,
      ),
    );
    expect(worker.output()).not.toMatch(/took tree job/);
    // Still waiting, no try spent, nothing of it run.
    expect(await jobs.find(jobId)).toMatchObject({ state: 'created', tries: 0 });
    const [waiting] = (await queue(env)).depth.filter((entry) => entry.kind === 'tree');
    expect(waiting).toEqual({ kind: 'tree', state: 'created', count: 1 });
    expect(await store.runs.getRunTree('local', 'run_future')).toBeUndefined();
    expect(model.requests).toEqual([]);
    // Its own format it runs as ever.
    const asked = await runCli(['ask', '--no-worker', 'Today?'], env);
    expect(asked.stdout).toBe('Answered.\n');
  }, 60_000);
});
