import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseJsonEventStream, type UIMessageChunk, uiMessageChunkSchema } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunPartData } from '../../src/app/answer/protocol.ts';
import { SERVE_NODE_FLAGS } from '../../src/cli/node-flags.ts';
import type { CadreEvent } from '../../src/core/events.ts';
import { contentText, type FixtureScript, startOpenAIServer } from '../fixtures/openai-server.ts';
import { fixtureModelEnv, tempHome } from '../helpers/cli.ts';
import { type ServeProcess, startServe } from '../helpers/serve.ts';
import { chatBody, readChunks, readMessage } from '../helpers/server.ts';

const isMain = (system: string) => system.includes('## When to delegate');

let cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function setup(script: FixtureScript, extraEnv: Record<string, string> = {}, args: string[] = []) {
  const model = await startOpenAIServer(script);
  cleanups.push(() => model.close());
  const env = {
    ...fixtureModelEnv(model),
    ...extraEnv,
  };
  const server = await startServe(['--port', '0', ...args], env);
  cleanups.push(() => {
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
  });
  return { model, server, env };
}

/** Main delegates to math, which answers after `mathReply` (a delay, a hang). */
function delegation(mathReply: Partial<{ delayMs: number; hang: boolean }> = {}): FixtureScript {
  return ({ body, system }) => {
    const last = body.messages.at(-1);
    if (isMain(system)) {
      if (last?.role === 'user')
        return { toolCalls: [{ name: 'math', arguments: { task: 'Compute 6 * 7.' } }] };
      return { text: 'It is 42.' };
    }
    return { text: `6 * 7 = 42 (${contentText(last?.content).length})`, ...mathReply };
  };
}

const post = (url: string, body: string, signal?: AbortSignal) =>
  fetch(url, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json' },
    ...(signal ? { signal } : {}),
  });

async function waitFor<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function storedAnswer(server: ServeProcess, sessionId: string) {
  const response = await fetch(`${server.url}/api/sessions/${sessionId}`);
  if (response.status !== 200) return undefined;
  const session = (await response.json()) as {
    messages: Array<{ role: string; parts: Array<{ type: string; data?: RunPartData }> }>;
  };
  return session.messages.find((message) => message.role === 'assistant');
}

describe('cadre serve over real HTTP', () => {
  it('prints where it listens, answers /health, streams a delegation, and stops on SIGTERM with exit 0', async () => {
    const { server } = await setup(delegation());
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // It restarted itself in place (same pid) with the Node flags `cadre serve` runs with.
    const commandLine = readFileSync(`/proc/${server.child.pid}/cmdline`, 'utf8').split('\0');
    for (const flag of SERVE_NODE_FLAGS) expect(commandLine).toContain(flag);
    const health = await fetch(`${server.url}/health`);
    expect(await health.json()).toEqual({ ok: true, version: expect.any(String) });

    const response = await post(`${server.url}/api/chat`, chatBody('e1', 'What is 6 times 7?'));
    expect(response.status).toBe(200);
    const message = await readMessage(await readChunks(response));
    expect(runStatuses(message)).toEqual([
      ['main', 'ok'],
      ['math', 'ok'],
    ]);
    const stored = await storedAnswer(server, 'e1');
    expect(stored?.parts.filter((part) => part.type === 'data-run')).toHaveLength(2);

    server.child.kill('SIGTERM');
    const result = await server.exited;
    expect(result.code).toBe(0);
    expect(server.output()).toMatch(/POST \/api\/chat 200 \d+ms/);
  });

  it('npm run cadre -- serve stops on a SIGTERM sent to npm, as a process manager sends it', async () => {
    const child = spawn('npm', ['run', '--silent', 'cadre', '--', 'serve', '--port', '0'], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      env: { ...process.env, CADRE_HOME: tempHome() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    let output = '';
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout!.on('data', (chunk) => {
        output += chunk;
        const match = /Cadre listening on (http:\/\/\S+)\n/.exec(output);
        if (match) resolve(match[1]!);
      });
      void exited.then(() => reject(new Error(`npm exited before the server listened: ${output}`)));
    });
    expect((await fetch(`${url}/health`)).ok).toBe(true);
    child.kill('SIGTERM');
    await exited;
    // The server itself stopped (it did not stay behind, orphaned, under a shell npm had signalled).
    await expect(fetch(`${url}/health`)).rejects.toThrow();
  });

  it('finishes and stores the tree when the client goes away, and replays its events as SSE', async () => {
    const { server } = await setup(delegation({ delayMs: 400 }));
    const controller = new AbortController();
    const response = await post(
      `${server.url}/api/chat`,
      chatBody('e2', 'What is 6 times 7?'),
      controller.signal,
    );
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    const answer = await waitFor(() => storedAnswer(server, 'e2'), 'the stored answer');
    const runs = answer.parts.filter((part) => part.type === 'data-run').map((part) => part.data!);
    expect(runs.map((run) => run.status)).toEqual(['ok', 'ok']);
    expect(runs[1]!.text).toMatch(/^6 \* 7 = 42/);

    // The whole tree's events, from the start and then after a given event id.
    const rootId = runs[0]!.runId;
    const all = parseSse(await (await fetch(`${server.url}/api/runs/${rootId}/events`)).text());
    expect(all[0]!.event.type).toBe('run-start');
    expect(all.at(-1)!.event).toMatchObject({ type: 'run-finish', runId: rootId });
    const rest = parseSse(
      await (
        await fetch(`${server.url}/api/runs/${rootId}/events`, { headers: { 'last-event-id': '3' } })
      ).text(),
    );
    expect(rest.map((item) => item.id)).toEqual(all.slice(4).map((item) => item.id));
  });

  it('on SIGTERM cancels running trees, stores them as cancelled, and exits 0', async () => {
    const { server, env } = await setup(delegation({ hang: true }));
    const response = await post(`${server.url}/api/chat`, chatBody('e4', 'What is 6 times 7?'));
    const reader = parseJsonEventStream({ stream: response.body!, schema: uiMessageChunkSchema }).getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done || !value?.success) throw new Error('the stream ended early');
      const chunk = value.value as { type: string; data?: RunPartData };
      if (chunk.type === 'data-run' && chunk.data?.agent === 'math') break;
    }
    server.child.kill('SIGTERM');
    const result = await server.exited;
    expect(result.code).toBe(0);
    expect(server.output()).toMatch(/SIGTERM: stopping/);
    // A new server on the same home finds the answer stored, every run cancelled.
    const again = await startServe(['--port', '0'], env);
    cleanups.push(() => {
      if (again.child.exitCode === null) again.child.kill('SIGKILL');
    });
    const answer = await storedAnswer(again, 'e4');
    const runs = answer!.parts.filter((part) => part.type === 'data-run').map((part) => part.data!);
    expect(runs.map((run) => [run.agent, run.status])).toEqual([
      ['main', 'cancelled'],
      ['math', 'cancelled'],
    ]);
  }, 30_000);

  it('follows a running tree over SSE and stops it with POST /api/runs/:id/cancel', async () => {
    const { server } = await setup(delegation({ hang: true }));
    const response = await post(`${server.url}/api/chat`, chatBody('e3', 'What is 6 times 7?'));
    const parsed = parseJsonEventStream({ stream: response.body!, schema: uiMessageChunkSchema });
    const reader = parsed.getReader();
    const seen: UIMessageChunk[] = [];
    // Read until the child is running: the root's id is then known and the tree is waiting on the model.
    let rootId: string | undefined;
    for (;;) {
      const { value, done } = await reader.read();
      if (done || !value?.success) throw new Error('the stream ended early');
      seen.push(value.value);
      const chunk = value.value as { type: string; data?: RunPartData };
      if (chunk.type === 'data-run' && chunk.data?.parentRunId === null) rootId = chunk.data.runId;
      if (chunk.type === 'data-run' && chunk.data?.agent === 'math') break;
    }
    const followed = fetch(`${server.url}/api/runs/${rootId}/events`).then((events) => events.text());
    const cancel = await fetch(`${server.url}/api/runs/${rootId}/cancel`, { method: 'POST' });
    expect(await cancel.json()).toEqual({ cancelled: true });
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (value.success) seen.push(value.value);
    }
    expect(runStatuses(await readMessage(seen))).toEqual([
      ['main', 'cancelled'],
      ['math', 'cancelled'],
    ]);
    const events = parseSse(await followed);
    expect(events[0]!.event.type).toBe('run-start');
    expect(events.at(-1)!.event).toMatchObject({ type: 'run-finish', runId: rootId, status: 'cancelled' });
    expect(events.map((item) => Number(item.id))).toEqual(events.map((_, index) => index));
    const tree = (await (await fetch(`${server.url}/api/runs/${rootId}`)).json()) as { status: string };
    expect(tree.status).toBe('cancelled');
  }, 20_000);
});

/** Each run's agent and status, from a message's data-run parts. */
function runStatuses(message: { parts: Array<{ type: string; data?: unknown }> }): string[][] {
  return message.parts
    .filter((part) => part.type === 'data-run')
    .map((part) => part.data as RunPartData)
    .map((run) => [run.agent, run.status]);
}

function parseSse(text: string): Array<{ id: string; event: CadreEvent }> {
  return text
    .split('\n\n')
    .filter((block) => block.includes('data:'))
    .map((block) => {
      const id = /^id: ?(.*)$/m.exec(block)?.[1] ?? '';
      const data = /^data: ?(.*)$/m.exec(block)?.[1] ?? '{}';
      return { id, event: JSON.parse(data) as CadreEvent };
    });
}
