import { describe, expect, it } from 'vitest';
import { Cadre } from '../../src/app/create-cadre.ts';
import { contentText } from '../fixtures/openai-server.ts';
import { runCli, testModeDatabase } from '../helpers/cli.ts';
import { cadreInProcess, fixtureCadre } from '../helpers/cli-in-process.ts';

// Two cadre processes on one CADRE_HOME: one answering (or killed while it answered), the other removing
// or resuming what the first holds. The careless person's other mistakes are tested in-process in
// test/cli/cli-careless.test.ts.

const lastUserText = (request: { body: { messages: Array<{ role: string; content?: unknown }> } }) =>
  contentText(request.body.messages.filter((message) => message.role === 'user').at(-1)?.content);

/** The id of the root run another process is running now, once its store shows one (it writes every 20 ms). */
async function runningRunId(env: Record<string, string>): Promise<string> {
  let runId: string | undefined;
  // Polling is the point: the event is a row another process writes, which sends no signal here.
  for (let tries = 0; tries < 200 && !runId; tries++) {
    if (tries) await new Promise((resolve) => setTimeout(resolve, 25));
    const listed = JSON.parse((await cadreInProcess(['runs', 'list', '--json'], env)).stdout).runs;
    runId = listed.find((run: { status: string }) => run.status === 'running')?.id;
  }
  expect(runId).toBeDefined();
  return runId!;
}

/** `cadre ARGS`, SIGKILLed once `ready` settles (while it waits on its model): its run is left interrupted. */
async function killedWhileAnswering(args: string[], env: Record<string, string>, ready: Promise<unknown>) {
  const result = await runCli(args, env, {
    // Killed either way: a `ready` that fails must not leave it waiting on a model that never answers.
    onSpawn: (child) => void ready.finally(() => child.kill('SIGKILL')).catch(() => {}),
  });
  expect(result.signal).toBe('SIGKILL');
}

describe('removing what another cadre process is using', { timeout: 60_000 }, () => {
  it('sessions rm refuses a session another cadre process is answering in; the answer then lands in it', async () => {
    // The other process's answer is held until the removal has been tried.
    const asked = Promise.withResolvers<void>();
    const answer = Promise.withResolvers<void>();
    const { env } = await fixtureCadre((request) => {
      if (lastUserText(request) !== 'slow') return { text: 'first answer' };
      asked.resolve();
      return { text: 'late answer', until: answer.promise };
    });
    expect((await cadreInProcess(['ask', 'first'], env)).code).toBe(0);
    const [session] = JSON.parse((await cadreInProcess(['sessions', 'list', '--json'], env)).stdout).sessions;
    const asking = runCli(['ask', '--session', session.id, 'slow'], env);
    await asked.promise;
    const running = await runningRunId(env);
    const removing = await cadreInProcess(['sessions', 'rm', session.id], env);
    expect(removing.code).toBe(2);
    expect(removing.stderr).toContain(
      `has an answer still running in another cadre process (run ${running})`,
    );
    answer.resolve();
    expect((await asking).code).toBe(0);
    const shown = JSON.parse((await cadreInProcess(['sessions', 'list', '--json'], env)).stdout).sessions;
    expect(shown.map((one: { id: string }) => one.id)).toEqual([session.id]);
    expect((await cadreInProcess(['sessions', 'rm', session.id], env)).code).toBe(0);
  });

  it('a long-lived cadre (serve) removes a session whose answering process was killed since it started', async () => {
    const asked = Promise.withResolvers<void>();
    const { env } = await fixtureCadre(() => {
      asked.resolve();
      return { hang: true };
    });
    // The store the `cadre` processes share (the PostgreSQL test mode gives each home its database).
    const cadre = await Cadre.create({
      env: { ...testModeDatabase(env), ...env },
      cwd: process.cwd(),
      lazy: true,
    });
    try {
      const session = await cadre.sessions.create('local');
      // Killed once its run is in the table as running.
      const running = asked.promise.then(() => runningRunId(env));
      await killedWhileAnswering(['ask', '--session', session.id, 'question'], env, running);
      // Its run is still recorded as running; its process is gone, so it no longer holds the session.
      const [run] = await cadre.store.runs.listRuns('local', { sessionId: session.id });
      expect(run?.status).toBe('running');
      await cadre.sessions.delete('local', session.id);
      await expect(cadre.sessions.get('local', session.id)).rejects.toThrow(/There is no session/);
    } finally {
      await cadre.close();
    }
  });

  it('runs rm refuses a tree another cadre process is still answering, which then ends stored', async () => {
    // The answer is held until the removal has been tried.
    const asked = Promise.withResolvers<void>();
    const answer = Promise.withResolvers<void>();
    const { env } = await fixtureCadre(() => {
      asked.resolve();
      return { text: 'late answer', until: answer.promise };
    });
    const asking = runCli(['ask', 'slow question'], env);
    await asked.promise;
    const runId = await runningRunId(env);
    const removing = await cadreInProcess(['runs', 'rm', runId!], env);
    expect(removing.code).toBe(2);
    expect(removing.stderr).toContain('still running in another cadre process');
    answer.resolve();
    const answered = await asking;
    expect([answered.code, answered.stdout]).toEqual([0, 'late answer\n']);
    const shown = await cadreInProcess(['runs', 'show', runId!, '--json'], env);
    expect(JSON.parse(shown.stdout).status).toBe('ok');
  });
});

describe('cadre runs resume twice, from two terminals', { timeout: 60_000 }, () => {
  /**
   * A tree interrupted while the model was answering (its process SIGKILLed). Later requests (the resumes')
   * are answered with `answer` once the test calls `release`; `resumeAsked` settles at the first of them.
   */
  async function interruptedTree(answer: string) {
    const killedAsked = Promise.withResolvers<void>();
    const resumeAsked = Promise.withResolvers<void>();
    const held = Promise.withResolvers<void>();
    const { server, env } = await fixtureCadre(({ index }) => {
      if (index === 0) {
        killedAsked.resolve();
        return { hang: true };
      }
      resumeAsked.resolve();
      return { text: answer, until: held.promise };
    });
    await killedWhileAnswering(['ask', 'a question'], env, killedAsked.promise);
    const [interrupted] = JSON.parse((await cadreInProcess(['runs', 'list', '--json'], env)).stdout).runs;
    expect(interrupted.status).toBe('interrupted');
    return {
      server,
      env,
      interrupted: interrupted as { id: string },
      resumeAsked: resumeAsked.promise,
      release: () => held.resolve(),
    };
  }

  it('the second is told the run is already being resumed by another process, and nothing runs twice', async () => {
    // The first resume's answer is held: the second, in this process, asks while the first is under way.
    const { server, env, interrupted, resumeAsked, release } = await interruptedTree('resumed answer');
    const first = runCli(['runs', 'resume', interrupted.id], env);
    await resumeAsked;
    const second = await cadreInProcess(['runs', 'resume', interrupted.id], env);
    expect(second.code).toBe(2);
    expect(second.stderr).toMatch(
      new RegExp(
        `^cadre: Run ${interrupted.id} is already being resumed by another cadre process \\(pid \\d+\\)`,
      ),
    );
    release();
    const resumed = await first;
    expect([resumed.code, resumed.stdout]).toEqual([0, 'resumed answer\n']);
    expect(server.requests).toHaveLength(2);
  });

  it('two resumes started at the same moment run the tree once: one answers, the other is refused', async () => {
    const { server, env, interrupted, release } = await interruptedTree('one answer');
    const both = [
      runCli(['runs', 'resume', interrupted.id], env),
      runCli(['runs', 'resume', interrupted.id], env),
    ];
    // The answer is held until one of the two has ended: that one was refused while the other resumed.
    await Promise.race(both);
    release();
    const results = await Promise.all(both);
    expect(results.map((result) => result.code).sort()).toEqual([0, 2]);
    expect(results.find((result) => result.code === 2)!.stderr).toContain('already being resumed');
    expect(server.requests).toHaveLength(2);
    const runs = JSON.parse((await cadreInProcess(['runs', 'list', '--json'], env)).stdout).runs;
    expect(runs.map((run: { status: string }) => run.status).sort()).toEqual(['interrupted', 'ok']);
  });
});
