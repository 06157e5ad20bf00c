/**
 * A person steers one sub-agent of a running tree from another process: `cadre runs stop RUN_ID` and
 * `POST /api/runs/:id/cancel` on a child stop that run alone. Its parent gets a `cancelled` envelope with
 * the work it had done and that the person stopped it; its sibling and the parent go on. Real processes on
 * one CADRE_HOME (SQLite), or runs as jobs on PostgreSQL with CADRE_TEST_MODE=postgres.
 */
import type { ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { contentText, type RecordedRequest, startOpenAIServer } from '../fixtures/openai-server.ts';
import { fixtureModelEnv, runCli, tempHome } from '../helpers/cli.ts';
import { eventually } from '../helpers/eventually.ts';
import { startServe } from '../helpers/serve.ts';
import { isMain, isMath } from '../web/web-app-setup.ts';

const taskOf = (request: RecordedRequest) =>
  contentText(request.body.messages.find((message) => message.role === 'user')?.content);

/**
 * Main sends two maths sub-agents; the slow one computes once, then waits on its model for ever. With
 * `mainWaitsOnce`, main's first follow-up never answers (the process is killed there).
 */
async function twoChildren(options: { mainWaitsOnce?: boolean } = {}) {
  let mainFollowUps = 0;
  return startOpenAIServer((request) => {
    const { body, system } = request;
    const last = body.messages.at(-1);
    if (isMain(system)) {
      if (last?.role === 'user')
        return {
          toolCalls: [
            { name: 'math', arguments: { task: 'Slow: work out 6 * 7 and much more.' }, id: 'call_slow' },
            { name: 'math', arguments: { task: 'Quick: what is 2 + 2?' }, id: 'call_quick' },
          ],
        };
      if (options.mainWaitsOnce && mainFollowUps++ === 0) return { hang: true };
      return { text: 'Main went on with both results.' };
    }
    if (isMath(system)) {
      if (taskOf(request).startsWith('Quick')) return { text: '2 + 2 = 4' };
      if (last?.role !== 'tool')
        return { toolCalls: [{ name: 'calculate', arguments: { expression: '6 * 7' } }] };
      return { hang: true };
    }
    return { text: 'unexpected' };
  });
}

interface TreeJson {
  id: string;
  status: string;
  agent: string;
  task: string;
  children: TreeJson[];
}

describe('stopping one sub-agent from another process', () => {
  for (const door of ['cli', 'http'] as const) {
    it(`${door === 'cli' ? 'cadre runs stop' : 'POST /api/runs/:id/cancel'} on a child stops it alone; its parent gets its work and goes on`, async () => {
      const model = await twoChildren();
      const home = tempHome();
      const env = fixtureModelEnv(model, home);
      const server = door === 'http' ? await startServe(['--port', '0'], env) : undefined;
      try {
        const asked = runCli(['ask', 'Work on two things', '--json'], env);
        // The slow child has computed and waits on its model: its completed call is the work to keep.
        await eventually(
          async () =>
            model.requests.some(
              (request) =>
                isMath(request.system) &&
                taskOf(request).startsWith('Slow') &&
                request.body.messages.at(-1)?.role === 'tool',
            ) || undefined,
          'the slow sub-agent to wait on its model',
        );
        const listed = await runCli(['runs', 'list', '--json'], env);
        const rootId = (JSON.parse(listed.stdout) as { runs: Array<{ id: string }> }).runs[0]!.id;
        const slow = await eventually(async () => {
          const shown = await runCli(['runs', 'show', rootId, '--json'], env);
          const tree = JSON.parse(shown.stdout) as TreeJson;
          return tree.children.find((run) => run.task.startsWith('Slow') && run.status === 'running');
        }, 'the slow run in the stored tree');

        if (door === 'cli') {
          const stopped = await runCli(['runs', 'stop', slow.id], env);
          expect(stopped.stdout).toContain(`Stopped run ${slow.id}.`);
          expect(stopped.code).toBe(0);
        } else {
          const response = await fetch(`${server!.url}/api/runs/${slow.id}/cancel`, { method: 'POST' });
          expect(await response.json()).toEqual({ cancelled: true });
        }

        const result = await asked;
        const printed = JSON.parse(result.stdout) as { status: string; answer: string; run: TreeJson };
        expect(printed.status).toBe('ok');
        expect(printed.answer).toBe('Main went on with both results.');
        const statuses = Object.fromEntries(
          printed.run.children.map((run) => [run.task.split(':')[0], run.status]),
        );
        expect(statuses).toEqual({ Slow: 'cancelled', Quick: 'ok' });
        // Main's model was told the person stopped it and got what it had computed.
        const followUp = model.requests.find(
          (request) => isMain(request.system) && request.body.messages.at(-1)?.role === 'tool',
        )!;
        const slowResult = followUp.body.messages.find(
          (message) => message.role === 'tool' && message.tool_call_id === 'call_slow',
        );
        const seen = contentText(slowResult?.content);
        expect(seen).toContain('"status":"cancelled"');
        expect(seen).toContain('"stopped_by":"the person"');
        expect(seen).toContain('42');
        // The stored tree says so in words too.
        const report = await runCli(['runs', 'show', rootId], env);
        expect(report.stdout).toContain('stopped by you; its parent went on with its work');
        // Stopping it again: it is not running any more.
        const again = await runCli(['runs', 'stop', slow.id], env);
        expect(again.code).not.toBe(0);
        expect(again.stderr).toContain('is not running (it ended cancelled)');
      } finally {
        server?.child.kill('SIGKILL');
        await model.close();
      }
    }, 90_000);
  }

  it('a kill after the stop and a resume replay the stop once: the stopped sub-agent is not run again', async () => {
    const model = await twoChildren({ mainWaitsOnce: true });
    const home = tempHome();
    const env = fixtureModelEnv(model, home);
    try {
      let asker: ChildProcess | undefined;
      const asked = runCli(['ask', 'Work on two things', '--json'], env, {
        onSpawn: (child) => {
          asker = child;
        },
      });
      const slowAsked = () =>
        model.requests.filter((request) => isMath(request.system) && taskOf(request).startsWith('Slow'));
      await eventually(
        async () => slowAsked().some((request) => request.body.messages.at(-1)?.role === 'tool') || undefined,
        'the slow sub-agent to wait on its model',
      );
      const listed = await runCli(['runs', 'list', '--json'], env);
      const rootId = (JSON.parse(listed.stdout) as { runs: Array<{ id: string }> }).runs[0]!.id;
      const slow = await eventually(async () => {
        const tree = JSON.parse((await runCli(['runs', 'show', rootId, '--json'], env)).stdout) as TreeJson;
        return tree.children.find((run) => run.task.startsWith('Slow') && run.status === 'running');
      }, 'the slow run in the stored tree');
      expect((await runCli(['runs', 'stop', slow.id], env)).code).toBe(0);
      // Main has both results and is asked to go on: the process dies there.
      const mainFollowUps = () =>
        model.requests.filter(
          (request) => isMain(request.system) && request.body.messages.at(-1)?.role === 'tool',
        );
      await eventually(async () => mainFollowUps().length || undefined, "main's follow-up");
      asker!.kill('SIGKILL');
      await asked;
      const slowBefore = slowAsked().length;

      const resumed = await runCli(['runs', 'resume', rootId, '--json'], env);
      expect(resumed.code).toBe(0);
      const result = JSON.parse(resumed.stdout) as { status: string; answer: string };
      expect(result).toMatchObject({ status: 'ok', answer: 'Main went on with both results.' });
      // The stop is replayed from the record, once: the stopped sub-agent was not asked again, and main's
      // model got its cancelled result once, as before the kill.
      expect(slowAsked()).toHaveLength(slowBefore);
      const followUp = mainFollowUps().at(-1)!;
      const slowResults = followUp.body.messages.filter(
        (message) => message.role === 'tool' && message.tool_call_id === 'call_slow',
      );
      expect(slowResults).toHaveLength(1);
      expect(contentText(slowResults[0]?.content)).toContain('"stopped_by":"the person"');
    } finally {
      await model.close();
    }
  }, 120_000);
});
