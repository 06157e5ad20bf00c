/**
 * A person follows up a finished sub-agent run: `cadre runs say RUN_ID "TEXT"` on a run that has ended
 * continues it from its kept conversation as a new turn of its session, and prints the answer; a kill
 * during the follow-up and a resume ask it once and store its answer once. Real processes on one
 * CADRE_HOME (SQLite), or runs as jobs on PostgreSQL with CADRE_TEST_MODE=postgres.
 */
import type { ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { contentText, startOpenAIServer } from '../fixtures/openai-server.ts';
import { fixtureModelEnv, runCli, tempHome } from '../helpers/cli.ts';
import { eventually } from '../helpers/eventually.ts';
import { startServe } from '../helpers/serve.ts';
import { isMain, isMath } from '../web/web-app-setup.ts';

interface TreeJson {
  id: string;
  agent: string;
  status: string;
  summary: string;
  continues?: string;
  children: TreeJson[];
}

describe('cadre runs say on a finished sub-agent run', () => {
  it('follows it up from its own conversation as a new turn of its session; a kill and a resume ask it once', async () => {
    let mathWaits = 1;
    const model = await startOpenAIServer(({ body, system }) => {
      const said = body.messages.map((message) => contentText(message.content)).join('\n');
      if (isMain(system)) {
        const tools = body.messages.filter((message) => message.role === 'tool');
        if (said.includes('What did math say last?'))
          return {
            text: said.includes('[The sub-agent math answered the person') ? 'math said 782' : 'no idea',
          };
        if (tools.length === 0)
          return { toolCalls: [{ name: 'math', arguments: { task: 'Compute 17 * 23.' } }] };
        return { text: 'Main: 391' };
      }
      if (isMath(system)) {
        if (!said.includes('Now double it.')) return { text: '17 * 23 = 391' };
        // The first follow-up's process dies while math is asked.
        if (mathWaits-- > 0) return { hang: true };
        return { text: said.includes('17 * 23 = 391') ? 'Doubled: 782' : 'Double what?' };
      }
      return { text: 'unexpected' };
    });
    const env = fixtureModelEnv(model, tempHome());
    const followUps = () =>
      model.requests.filter(
        (request) =>
          isMath(request.system) && JSON.stringify(request.body.messages).includes('Now double it.'),
      );
    try {
      const asked = await runCli(['ask', 'What is 17 * 23?', '--json'], env);
      expect(asked.code, asked.stderr).toBe(0);
      const first = JSON.parse(asked.stdout) as { sessionId: string; run: TreeJson };
      const mathId = first.run.children[0]!.id;

      // A tree's root is followed up in its chat.
      const atRoot = await runCli(['runs', 'say', first.run.id, 'More?'], env);
      expect(atRoot.code).toBe(2);
      expect(atRoot.stderr).toContain('not running');

      let child: ChildProcess | undefined;
      const killed = runCli(['runs', 'say', mathId, 'Now double it.', '--json'], env, {
        onSpawn: (spawned) => {
          child = spawned;
        },
      });
      await eventually(async () => followUps().length || undefined, 'the follow-up asked of math');
      child!.kill('SIGKILL');
      await killed;
      const listed = JSON.parse((await runCli(['runs', 'list', '--json'], env)).stdout) as {
        runs: Array<{ id: string; agent: string }>;
      };
      const followUpRoot = listed.runs[0]!;
      expect(followUpRoot.agent).toBe('math');

      const resumed = await runCli(['runs', 'resume', followUpRoot.id, '--json'], env);
      expect(resumed.code, resumed.stderr).toBe(0);
      const answered = JSON.parse(resumed.stdout) as { answer: string; sessionId: string; run: TreeJson };
      expect(answered).toMatchObject({ answer: 'Doubled: 782', sessionId: first.sessionId });
      expect(answered.run).toMatchObject({ agent: 'math', status: 'ok', continues: mathId });
      // Asked once per attempt, each time with the message once, after math's own conversation.
      expect(followUps()).toHaveLength(2);
      for (const request of followUps()) {
        const texts = request.body.messages.map((message) => contentText(message.content));
        expect(texts.filter((text) => text.includes('Now double it.'))).toHaveLength(1);
        expect(texts).toContain('17 * 23 = 391');
      }

      // A follow-up answered at once, printed as cadre ask prints: the follow-up's run can be followed up too.
      const again = await runCli(['runs', 'say', answered.run.id, 'Now double it.'], env);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout.trim()).toBe('Doubled: 782');

      // The session holds each follow-up and its answer once; main reads them as math's exchange.
      const next = await runCli(
        ['ask', '--session', first.sessionId, 'What did math say last?', '--json'],
        env,
      );
      expect(JSON.parse(next.stdout)).toMatchObject({ answer: 'math said 782' });
      const history = model.requests
        .filter((request) => isMain(request.system))
        .at(-1)!
        .body.messages.filter((message) => message.role !== 'system')
        .map((message) => contentText(message.content));
      const followedUp = (text: string) =>
        `[A follow-up the person asked the sub-agent math directly, continuing its run ${text}:]\nNow double it.`;
      const answeredBy = (runId: string) =>
        `[The sub-agent math answered the person's follow-up (its run ${runId}):]\nDoubled: 782`;
      const secondRun = (
        JSON.parse((await runCli(['runs', 'list', '--json'], env)).stdout) as {
          runs: Array<{ id: string; agent: string }>;
        }
      ).runs.find((run) => run.agent === 'math')!.id;
      expect(history).toEqual([
        'What is 17 * 23?',
        'Main: 391',
        followedUp(mathId),
        answeredBy(answered.run.id),
        followedUp(answered.run.id),
        answeredBy(secondRun),
        'What did math say last?',
      ]);
    } finally {
      await model.close();
    }
  }, 180_000);

  it('POST /api/runs/:id/messages on a finished sub-agent run starts its follow-up (202) on a served process', async () => {
    const model = await startOpenAIServer(({ body, system }) => {
      const said = body.messages.map((message) => contentText(message.content)).join('\n');
      if (isMain(system))
        return body.messages.some((message) => message.role === 'tool')
          ? { text: 'Main: 391' }
          : { toolCalls: [{ name: 'math', arguments: { task: 'Compute 17 * 23.' } }] };
      if (isMath(system))
        return said.includes('Now double it.')
          ? { text: said.includes('17 * 23 = 391') ? 'Doubled: 782' : 'Double what?' }
          : { text: '17 * 23 = 391' };
      return { text: 'unexpected' };
    });
    const env = fixtureModelEnv(model, tempHome());
    const server = await startServe(['--port', '0'], env);
    try {
      const asked = await runCli(['ask', 'What is 17 * 23?', '--json'], env);
      const first = JSON.parse(asked.stdout) as { sessionId: string; run: TreeJson };
      const mathId = first.run.children[0]!.id;
      const post = (id: string) =>
        fetch(`${server.url}/api/runs/${id}/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ text: 'Now double it.' }),
        });
      const atRoot = await post(first.run.id);
      expect(atRoot.status).toBe(409);
      const response = await post(mathId);
      expect(response.status).toBe(202);
      const started = (await response.json()) as { runId: string; continues: string; sessionId: string };
      expect(started).toMatchObject({ continues: mathId, sessionId: first.sessionId });
      // Its events, followed over SSE until the tree ends.
      const events = await (await fetch(`${server.url}/api/runs/${started.runId}/events`)).text();
      expect(events).toContain('event: run-finish');
      const tree = (await (await fetch(`${server.url}/api/runs/${started.runId}`)).json()) as TreeJson;
      expect(tree).toMatchObject({ agent: 'math', status: 'ok', summary: 'Doubled: 782', continues: mathId });
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
      await model.close();
    }
  }, 120_000);
});
