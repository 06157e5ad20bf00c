/**
 * The main agent follows up a finished sub-agent with `continue_agent {run_id, message}`: the sub-agent
 * goes on from its own conversation as a new run linked to the earlier one, whose usage counts in the
 * tree. Through `cadre ask` (SQLite), or as jobs on PostgreSQL with CADRE_TEST_MODE=postgres (the
 * sub-agent's conversation comes back from the worker that ran it).
 */
import type { ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { contentText, startOpenAIServer } from '../fixtures/openai-server.ts';
import { fixtureModelEnv, runCli, tempHome } from '../helpers/cli.ts';
import { eventually } from '../helpers/eventually.ts';
import { isMain, isMath } from '../web/web-app-setup.ts';

interface TreeJson {
  id: string;
  agent: string;
  status: string;
  summary: string;
  continues?: string;
  usage: { totalTokens: number };
  subtreeUsage: { totalTokens: number };
  children: TreeJson[];
}

describe('continue_agent', () => {
  it('goes on with a finished sub-agent from its own conversation, as a new run linked to it', async () => {
    const model = await startOpenAIServer(({ body, system }) => {
      const tools = body.messages.filter((message) => message.role === 'tool');
      const usage = { prompt_tokens: 100, completion_tokens: 10 };
      if (isMain(system)) {
        if (tools.length === 0)
          return { toolCalls: [{ name: 'math', arguments: { task: 'Compute 17 * 23.' } }], usage };
        if (tools.length === 1) {
          const view = JSON.parse(contentText(tools[0]?.content)) as { run_id: string };
          return {
            toolCalls: [
              { name: 'continue_agent', arguments: { run_id: view.run_id, message: 'Now double it.' } },
            ],
            usage,
          };
        }
        return { text: `Main: ${JSON.parse(contentText(tools[1]?.content)).summary}`, usage };
      }
      if (isMath(system)) {
        const said = body.messages.map((message) => contentText(message.content)).join('\n');
        if (said.includes('Now double it.'))
          return {
            text: said.includes('17 * 23 = 391') ? 'Doubled: 782' : 'I do not know what to double.',
            usage,
          };
        return { text: '17 * 23 = 391', usage };
      }
      return { text: 'unexpected' };
    });
    try {
      const env = fixtureModelEnv(model, tempHome());
      const result = await runCli(['ask', 'What is 17 * 23, doubled?', '--json'], env);
      expect(result.code).toBe(0);
      const printed = JSON.parse(result.stdout) as { answer: string; run: TreeJson };
      expect(printed.answer).toBe('Main: Doubled: 782');
      const [first, second] = printed.run.children;
      expect([first?.agent, first?.status, second?.agent, second?.status]).toEqual([
        'math',
        'ok',
        'math',
        'ok',
      ]);
      expect(second?.continues).toBe(first?.id);
      // Each model call is 110 tokens: main's three and math's two are the tree's.
      expect(printed.run.subtreeUsage.totalTokens).toBe(5 * 110);
      // The continuation saw the first run's task and answer, then the new message, once.
      const continued = model.requests.filter(
        (request) =>
          isMath(request.system) && JSON.stringify(request.body.messages).includes('Now double it.'),
      );
      expect(continued).toHaveLength(1);
      const shown = await runCli(['runs', 'show', printed.run.id, '--json'], env);
      expect((JSON.parse(shown.stdout) as TreeJson).children[1]?.continues).toBe(first?.id);
    } finally {
      await model.close();
    }
  }, 90_000);
});

describe('continue_agent after a kill', () => {
  it('continues a run whose result a resume replayed, from its kept conversation; a kill during the follow-up and a resume ask it once', async () => {
    let mainWaits = 1;
    let mathWaits = 1;
    const model = await startOpenAIServer(({ body, system }) => {
      const tools = body.messages.filter((message) => message.role === 'tool');
      if (isMain(system)) {
        if (tools.length === 0)
          return { toolCalls: [{ name: 'math', arguments: { task: 'Compute 17 * 23.' } }] };
        if (tools.length === 1) {
          // The first attempt dies here, with math's result in its journal.
          if (mainWaits-- > 0) return { hang: true };
          const view = JSON.parse(contentText(tools[0]?.content)) as { run_id: string };
          return {
            toolCalls: [
              { name: 'continue_agent', arguments: { run_id: view.run_id, message: 'Now double it.' } },
            ],
          };
        }
        return { text: `Main: ${JSON.parse(contentText(tools[1]?.content)).summary}` };
      }
      if (isMath(system)) {
        const said = body.messages.map((message) => contentText(message.content)).join('\n');
        if (!said.includes('Now double it.')) return { text: '17 * 23 = 391' };
        // The second attempt dies during the follow-up.
        if (mathWaits-- > 0) return { hang: true };
        return { text: said.includes('17 * 23 = 391') ? 'Doubled: 782' : 'I do not know what to double.' };
      }
      return { text: 'unexpected' };
    });
    const env = fixtureModelEnv(model, tempHome());
    const newestRoot = async () =>
      (JSON.parse((await runCli(['runs', 'list', '--json'], env)).stdout) as { runs: Array<{ id: string }> })
        .runs[0]!.id;
    /** Runs `args` until the model has been asked `count` requests matching `asked`, then kills it. */
    const killAfter = async (args: string[], asked: () => number, count: number) => {
      let child: ChildProcess | undefined;
      const running = runCli(args, env, { onSpawn: (spawned) => (child = spawned) });
      await eventually(async () => asked() >= count || undefined, `request ${count} of ${args.join(' ')}`);
      child!.kill('SIGKILL');
      await running;
    };
    const mainFollowUps = () =>
      model.requests.filter(
        (request) => isMain(request.system) && request.body.messages.at(-1)?.role === 'tool',
      ).length;
    const followUps = () =>
      model.requests.filter(
        (request) =>
          isMath(request.system) && JSON.stringify(request.body.messages).includes('Now double it.'),
      );
    try {
      await killAfter(['ask', 'What is 17 * 23, doubled?', '--json'], mainFollowUps, 1);
      const firstRoot = await newestRoot();
      await killAfter(['runs', 'resume', firstRoot, '--json'], () => followUps().length, 1);
      const secondRoot = await newestRoot();
      const resumed = await runCli(['runs', 'resume', secondRoot, '--json'], env);
      expect(resumed.code, resumed.stderr).toBe(0);
      const printed = JSON.parse(resumed.stdout) as { answer: string; run: TreeJson };
      expect(printed.answer).toBe('Main: Doubled: 782');
      // Math ran once for the first question; its run is the one continued.
      const mathFirst = model.requests.filter(
        (request) =>
          isMath(request.system) && !JSON.stringify(request.body.messages).includes('Now double it.'),
      );
      expect(mathFirst).toHaveLength(1);
      const firstTree = JSON.parse(
        (await runCli(['runs', 'show', firstRoot, '--json'], env)).stdout,
      ) as TreeJson;
      const continued = printed.run.children.find((run) => run.continues);
      expect(continued).toMatchObject({ agent: 'math', status: 'ok', continues: firstTree.children[0]?.id });
      // The follow-up was asked once per attempt that reached it, each with the message once, after
      // math's own conversation.
      expect(followUps()).toHaveLength(2);
      for (const request of followUps()) {
        const said = request.body.messages.map((message) => contentText(message.content));
        expect(said.filter((text) => text.includes('Now double it.'))).toHaveLength(1);
        expect(said.some((text) => text.includes('17 * 23 = 391'))).toBe(true);
      }
    } finally {
      await model.close();
    }
  }, 180_000);
});
