/**
 * Background sub-agents through the CLI and HTTP: a delegation to an agent whose definition says
 * `background: true` returns at once, main answers, and the sub-agent's envelope comes later as a new turn
 * main answers; `cadre runs list --running` and `GET /api/runs?running=true` list it, marked; `cadre runs
 * stop` stops it; a kill after its delivery and a resume deliver it once. Real processes on one
 * CADRE_HOME (SQLite), or runs as jobs on PostgreSQL with CADRE_TEST_MODE=postgres.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isScout, SCOUT, said } from '../fixtures/background-agent.ts';
import { contentText, type RecordedRequest, startOpenAIServer } from '../fixtures/openai-server.ts';
import { fixtureModelEnv, runCli, tempHome } from '../helpers/cli.ts';
import { eventually } from '../helpers/eventually.ts';
import { startServe } from '../helpers/serve.ts';
import { isMain } from '../web/web-app-setup.ts';

interface RunningJson {
  runs: Array<{ id: string; parentId: string | null; agent: string; background?: boolean }>;
}
interface TreeJson {
  id: string;
  status: string;
  agent: string;
  background?: boolean;
  messages?: Array<{ step: number; background?: { runId: string; status: string } }>;
  children: TreeJson[];
}

/** A home with the scout agent, and a model whose scout answers once `release` is called (or never). */
async function backgroundSetting(options: { mainHangsOnce?: boolean } = {}) {
  let release: (value?: unknown) => void = () => {};
  const scoutMay = new Promise((resolve) => {
    release = resolve;
  });
  let hung = false;
  const model = await startOpenAIServer((request) => {
    const { body, system } = request;
    const last = body.messages.at(-1);
    if (isMain(system)) {
      if (!body.messages.some((message) => message.role === 'tool'))
        return { toolCalls: [{ name: 'scout', arguments: { task: 'Find the answer.' }, id: 'call_scout' }] };
      if (last?.role === 'tool') return { text: 'Scout is on it.' };
      if (options.mainHangsOnce && !hung) {
        hung = true;
        return { hang: true };
      }
      const text = contentText(last?.content);
      if (text.includes('Are you there?')) return { text: 'Yes, scout is still looking.' };
      return {
        text: text.includes('Found 42')
          ? 'Scout found 42.'
          : text.includes('cancelled')
            ? 'Scout was stopped.'
            : '?',
      };
    }
    if (isScout(system)) return { text: 'Found 42', until: scoutMay };
    return { text: 'unexpected' };
  });
  const home = tempHome();
  mkdirSync(join(home, 'agents'), { recursive: true });
  writeFileSync(join(home, 'agents', 'scout.md'), SCOUT);
  return { model, home, env: fixtureModelEnv(model, home), release };
}

const mainAnswered = (requests: RecordedRequest[]) =>
  requests.some((request) => isMain(request.system) && request.body.messages.at(-1)?.role === 'tool');

describe('background sub-agents', () => {
  it('main answers at once; the envelope comes later as a new turn; listed while it runs, by the CLI and HTTP', async () => {
    const { model, env, release } = await backgroundSetting();
    const server = await startServe(['--port', '0'], env);
    try {
      const asked = runCli(['ask', 'What is the answer?', '--json'], env);
      await eventually(async () => mainAnswered(model.requests) || undefined, 'main to answer');
      const running = await eventually(async () => {
        const listed = JSON.parse(
          (await runCli(['runs', 'list', '--running', '--json'], env)).stdout,
        ) as RunningJson;
        return listed.runs.some((run) => run.agent === 'scout') ? listed : undefined;
      }, 'the scout among the running runs');
      const scout = running.runs.find((run) => run.agent === 'scout')!;
      expect(scout.background).toBe(true);
      const root = running.runs.find((run) => run.parentId === null)!;
      expect(root.agent).toBe('main');
      const text = await runCli(['runs', 'list', '--running'], env);
      expect(text.stdout).toContain(`${scout.id}`);
      expect(text.stdout).toContain('1 running in the background.');
      const shown = await runCli(['runs', 'show', root.id], env);
      expect(shown.stdout).toContain('running in the background');
      const overHttp = (await (await fetch(`${server.url}/api/runs?running=true`)).json()) as RunningJson;
      expect(overHttp.runs.find((run) => run.id === scout.id)).toMatchObject({ background: true });

      release();
      const result = await asked;
      expect(result.code).toBe(0);
      expect(result.stderr).toContain(`cadre: scout (${scout.id}) finished in the background (ok)`);
      const printed = JSON.parse(result.stdout) as { answer: string; run: TreeJson };
      expect(printed.answer).toBe('Scout is on it.\n\nScout found 42.');
      expect(printed.run.children[0]).toMatchObject({ agent: 'scout', status: 'ok', background: true });
      expect(printed.run.messages).toMatchObject([{ background: { runId: scout.id, status: 'ok' } }]);
      // Main's model was handed the envelope once, in a new turn after its answer.
      const last = model.requests.filter((request) => isMain(request.system)).at(-1)!;
      expect(said(last).split('Found 42').length - 1).toBe(1);
      const after = JSON.parse(
        (await runCli(['runs', 'list', '--running', '--json'], env)).stdout,
      ) as RunningJson;
      expect(after.runs).toEqual([]);
    } finally {
      server.child.kill('SIGKILL');
      await model.close();
    }
  }, 90_000);

  it('cadre runs say to the main agent while it waits for a background run: it answers that at once', async () => {
    const { model, env, release } = await backgroundSetting();
    try {
      const asked = runCli(['ask', 'What is the answer?', '--json'], env);
      await eventually(async () => mainAnswered(model.requests) || undefined, 'main to answer');
      const root = await eventually(async () => {
        const listed = JSON.parse(
          (await runCli(['runs', 'list', '--running', '--json'], env)).stdout,
        ) as RunningJson;
        return listed.runs.some((run) => run.agent === 'scout')
          ? listed.runs.find((run) => run.parentId === null)
          : undefined;
      }, 'the scout among the running runs');
      expect((await runCli(['runs', 'say', root.id, 'Are you there?'], env)).code).toBe(0);
      await eventually(
        async () =>
          model.requests.some(
            (request) => isMain(request.system) && said(request).includes('Are you there?'),
          ) || undefined,
        'main to be asked',
      );
      release();
      const printed = JSON.parse((await asked).stdout) as { answer: string };
      expect(printed.answer).toBe('Yes, scout is still looking.\n\nScout found 42.');
    } finally {
      await model.close();
    }
  }, 90_000);

  for (const door of ['cli', 'http'] as const) {
    it(`${door === 'cli' ? 'cadre runs stop' : 'POST /api/runs/:id/cancel'} on a background run ends it; main answers what the person stopped`, async () => {
      const { model, env } = await backgroundSetting();
      const server = door === 'http' ? await startServe(['--port', '0'], env) : undefined;
      try {
        const asked = runCli(['ask', 'What is the answer?', '--json'], env);
        await eventually(async () => mainAnswered(model.requests) || undefined, 'main to answer');
        const scout = await eventually(async () => {
          const listed = JSON.parse(
            (await runCli(['runs', 'list', '--running', '--json'], env)).stdout,
          ) as RunningJson;
          return listed.runs.find((run) => run.agent === 'scout');
        }, 'the scout among the running runs');
        if (door === 'cli') expect((await runCli(['runs', 'stop', scout.id], env)).code).toBe(0);
        else {
          const response = await fetch(`${server!.url}/api/runs/${scout.id}/cancel`, { method: 'POST' });
          expect(await response.json()).toEqual({ cancelled: true });
        }
        const printed = JSON.parse((await asked).stdout) as { answer: string; run: TreeJson };
        expect(printed.answer).toBe('Scout is on it.\n\nScout was stopped.');
        expect(printed.run.children[0]).toMatchObject({ agent: 'scout', status: 'cancelled' });
      } finally {
        server?.child.kill('SIGKILL');
        await model.close();
      }
    }, 90_000);
  }

  it('a kill after the delivery and a resume deliver the background result once, without running it again', async () => {
    const { model, env, release } = await backgroundSetting({ mainHangsOnce: true });
    try {
      let asker: ChildProcess | undefined;
      const asked = runCli(['ask', 'What is the answer?', '--json'], env, {
        onSpawn: (child) => {
          asker = child;
        },
      });
      await eventually(async () => mainAnswered(model.requests) || undefined, 'main to answer');
      release();
      // Main's new turn with the envelope is under way (and never answers): the process dies there.
      const newTurns = () =>
        model.requests.filter((request) => isMain(request.system) && said(request).includes('Found 42'));
      await eventually(async () => newTurns().length || undefined, "main's new turn");
      const listed = JSON.parse((await runCli(['runs', 'list', '--json'], env)).stdout) as {
        runs: Array<{ id: string }>;
      };
      const rootId = listed.runs[0]!.id;
      asker!.kill('SIGKILL');
      await asked;
      const scoutAsked = model.requests.filter((request) => isScout(request.system)).length;

      const resumed = await runCli(['runs', 'resume', rootId, '--json'], env);
      expect(resumed.code).toBe(0);
      const result = JSON.parse(resumed.stdout) as { status: string; answer: string };
      expect(result).toMatchObject({ status: 'ok', answer: 'Scout is on it.\n\nScout found 42.' });
      expect(model.requests.filter((request) => isScout(request.system))).toHaveLength(scoutAsked);
      const last = newTurns().at(-1)!;
      expect(said(last).split('Found 42').length - 1).toBe(1);
    } finally {
      await model.close();
    }
  }, 120_000);
});
