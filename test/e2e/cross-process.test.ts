/**
 * A running tree is a thing in the store: a `cadre serve` follows and stops a tree a terminal's `cadre ask`
 * runs, and a tree the OpenAI-compatible door started survives its server being killed and is resumed
 * from its journal. Real processes on one CADRE_HOME; the process boundary is the subject.
 */
import { describe, expect, it } from 'vitest';
import { startOpenAIServer } from '../fixtures/openai-server.ts';
import { fixtureModelEnv, runCli, tempHome } from '../helpers/cli.ts';
import { eventually } from '../helpers/eventually.ts';
import { startServe } from '../helpers/serve.ts';
import { isMain, isMath } from '../web/web-app-setup.ts';

/** Reads an SSE body and calls `onData` with each `data:` payload until it returns true or the body ends. */
async function readSse(response: Response, onData: (data: string) => boolean | undefined): Promise<void> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    const blocks = buffer.split('\n\n');
    buffer = blocks.pop() ?? '';
    for (const block of blocks) {
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n');
      if (data && onData(data)) {
        await reader.cancel();
        return;
      }
    }
  }
}

describe('a tree run by one process, seen from another', () => {
  it("cadre serve follows a terminal's answer live and its Stop ends it there", async () => {
    const model = await startOpenAIServer(({ body, system }) => {
      if (isMain(system) && body.messages.at(-1)?.role === 'user')
        return { toolCalls: [{ name: 'math', arguments: { task: 'Work on this for a long time.' } }] };
      if (isMath(system)) return { hang: true };
      return { text: 'unexpected' };
    });
    const home = tempHome();
    const env = fixtureModelEnv(model, home);
    const server = await startServe(['--port', '0'], env);
    try {
      const asked = runCli(['ask', 'Take your time', '--json'], env);
      const sessionId = await eventually(async () => {
        const { sessions } = (await (await fetch(`${server.url}/api/sessions`)).json()) as {
          sessions: Array<{ id: string }>;
        };
        return sessions[0]?.id;
      }, 'the terminal’s session');
      // The page's way in: the answer being written in the session, replayed and then live.
      const attached = await eventually(async () => {
        const response = await fetch(`${server.url}/api/chat/${sessionId}/stream`);
        return response.status === 200 ? response : undefined;
      }, 'the running answer');
      let rootRunId: string | undefined;
      await readSse(attached, (data) => {
        const chunk = JSON.parse(data) as {
          type: string;
          data?: { agent?: string; runId?: string; rootRunId?: string };
        };
        if (chunk.type === 'data-run' && chunk.data?.agent === 'math') {
          rootRunId = chunk.data.rootRunId;
          return true;
        }
        return undefined;
      });
      expect(rootRunId).toBeDefined();

      const stoppedAt = Date.now();
      const stop = await fetch(`${server.url}/api/runs/${rootRunId}/cancel`, { method: 'POST' });
      expect(await stop.json()).toEqual({ cancelled: true });
      const result = await asked;
      expect(Date.now() - stoppedAt).toBeLessThan(5_000);
      expect(result.code).not.toBe(0);
      const printed = JSON.parse(result.stdout) as {
        status: string;
        run: { children: Array<{ status: string }> };
      };
      expect(printed.status).toBe('cancelled');
      expect(printed.run.children.map((child) => child.status)).toEqual(['cancelled']);
      // Nothing is running any more, so nothing is attached to.
      expect((await fetch(`${server.url}/api/chat/${sessionId}/stream`)).status).toBe(204);
    } finally {
      server.child.kill('SIGKILL');
      await model.close();
    }
  }, 60_000);

  it('an OpenAI-door tree cut off by a killed server is resumed from its journal, its committed step not asked again', async () => {
    let mathCalls = 0;
    const model = await startOpenAIServer(({ body, system }) => {
      const last = body.messages.at(-1);
      if (isMain(system)) {
        if (last?.role === 'user')
          return { toolCalls: [{ name: 'math', arguments: { task: 'Compute 17 * 23.' } }] };
        return { text: 'The product is 391.' };
      }
      // The first attempt's sub-agent never answers: its server is killed while it waits.
      if (isMath(system) && mathCalls++ === 0) return { hang: true };
      return { text: '17 × 23 = 391' };
    });
    const home = tempHome();
    const env = fixtureModelEnv(model, home);
    const first = await startServe(['--port', '0'], env);
    const completion = fetch(`${first.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'cadre',
        stream: true,
        messages: [{ role: 'user', content: 'What is 17 × 23?' }],
      }),
    });
    // The main agent's step is secured (the spool) before any later model request goes out, so once the
    // sub-agent's request has arrived there is nothing to wait for: a kill now must not lose that step.
    await eventually(async () => (mathCalls > 0 ? true : undefined), 'the sub-agent to start');
    first.child.kill('SIGKILL');
    await first.exited;
    await completion.catch(() => undefined);

    const listed = await runCli(['runs', 'list', '--json'], env);
    const [root] = (JSON.parse(listed.stdout) as { runs: Array<{ id: string; status: string }> }).runs;
    expect(root?.status).toBe('interrupted');
    const second = await startServe(['--port', '0'], env);
    try {
      const resumed = await fetch(`${second.url}/api/runs/${root!.id}/resume`, { method: 'POST' });
      expect(resumed.status).toBe(202);
      const { runId } = (await resumed.json()) as { runId: string };
      const tree = await eventually(async () => {
        const read = (await (await fetch(`${second.url}/api/runs/${runId}`)).json()) as {
          status: string;
          summary: string;
        };
        return read.status === 'running' ? undefined : read;
      }, 'the resumed tree to end');
      expect(tree).toMatchObject({ status: 'ok', summary: 'The product is 391.' });
      const mainQuestions = model.requests.filter(
        (request) => isMain(request.system) && request.body.messages.at(-1)?.role === 'user',
      );
      expect(mainQuestions).toHaveLength(1);
    } finally {
      second.child.kill('SIGKILL');
      await model.close();
    }
  }, 60_000);
});
