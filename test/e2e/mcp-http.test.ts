import { request as httpRequest } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startOpenAIServer } from '../fixtures/openai-server.ts';
import { fixtureModelEnv, runCli } from '../helpers/cli.ts';
import { startServe } from '../helpers/serve.ts';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
});
const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** POSTs an initialize with a chosen Host header (fetch does not let one set it). */
function postWithHost(endpoint: string, host: string, token: string): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      endpoint,
      { method: 'POST', headers: { ...mcpHeaders, host, authorization: `Bearer ${token}` } },
      (response) => {
        response.resume();
        resolve(response.statusCode);
      },
    );
    request.on('error', reject);
    request.end(initialize);
  });
}

describe('/mcp on cadre serve', () => {
  it("serves the agents over Streamable HTTP behind the server's token, Host and Origin checks", async () => {
    const model = await startOpenAIServer(({ body }) =>
      body.messages.at(-1)?.role === 'user'
        ? { toolCalls: [{ name: 'calculate', arguments: { expression: '6 * 7' } }] }
        : { text: '6 * 7 = 42' },
    );
    cleanups.push(() => model.close());
    const env = fixtureModelEnv(model);
    const added = await runCli(['users', 'add', 'alice', '--json'], env);
    const { token } = JSON.parse(added.stdout) as { token: string };
    const server = await startServe(['--port', '0'], env);
    cleanups.push(() => {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    });
    const endpoint = `${server.url}/mcp`;

    const anonymous = await fetch(endpoint, { method: 'POST', headers: mcpHeaders, body: initialize });
    expect(anonymous.status).toBe(401);
    const foreignPage = await fetch(endpoint, {
      method: 'POST',
      headers: { ...mcpHeaders, authorization: `Bearer ${token}`, origin: 'https://evil.example' },
      body: initialize,
    });
    expect(foreignPage.status).toBe(403);
    // A DNS-rebinding page reaches the socket with its own name in Host.
    expect(await postWithHost(endpoint, 'evil.example', token)).toBe(403);

    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(endpoint), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    cleanups.push(() => client.close());
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['main', 'math']));
    const progress: string[] = [];
    const result = (await client.callTool({ name: 'math', arguments: { task: '6 times 7?' } }, undefined, {
      onprogress: (update) => progress.push(update.message ?? ''),
    })) as CallToolResult;
    expect(result.structuredContent).toMatchObject({ status: 'ok', summary: '6 * 7 = 42' });
    expect(progress).toEqual(['math started', 'math calls calculate', 'math finished: ok']);

    // The run is stored for the user who called, and only they see it.
    const runId = (result.structuredContent as { runId: string }).runId;
    const bobToken = JSON.parse((await runCli(['users', 'add', 'bob', '--json'], env)).stdout)
      .token as string;
    const asAlice = await fetch(`${server.url}/api/runs/${runId}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(asAlice.status).toBe(200);
    expect(await asAlice.json()).toMatchObject({ agent: 'math', status: 'ok' });
    const asBob = await fetch(`${server.url}/api/runs/${runId}`, {
      headers: { authorization: `Bearer ${bobToken}` },
    });
    expect(asBob.status).toBe(404);
  });

  it('cancels a call whose client went away over the socket before its answer', async () => {
    const model = await startOpenAIServer(() => ({ hang: true }));
    cleanups.push(() => model.close());
    const env = fixtureModelEnv(model);
    const server = await startServe(['--port', '0'], env);
    cleanups.push(() => {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const call = client
      .callTool({ name: 'math', arguments: { task: 'Think forever.' } }, undefined, {
        onprogress: () => started(),
      })
      .catch((caught: unknown) => caught);
    await running;
    // The client quits: its sockets close and it never sends notifications/cancelled.
    await client.close();
    expect(String(await call)).toMatch(/Connection closed/);
    await expect
      .poll(
        async () => {
          const listed = JSON.parse((await runCli(['runs', 'list', '--json'], env)).stdout) as {
            runs: Array<{ agent: string; status: string }>;
          };
          return listed.runs.map((run) => ({ agent: run.agent, status: run.status }));
        },
        { timeout: 10_000, interval: 200 },
      )
      .toEqual([{ agent: 'math', status: 'cancelled' }]);
  });
});
