import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { tempHome } from '../../../test/helpers/cli.ts';
import { whenStored } from '../../../test/helpers/store-waits.ts';
import { Cadre } from '../../app/create-cadre.ts';
import { ingestDocument } from '../../documents/ingest.ts';
import { ScriptedModel, type ScriptedReply, type ScriptedRequest } from '../../models/scripted-model.ts';
import { openSqliteStore } from '../../store/sqlite/sqlite-store.ts';
import { type McpHttpEnv, type McpHttpLimits, mcpHttpRoutes } from './http-routes.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * The routes mounted at /mcp behind a stand-in for the server's auth (the `x-user` header names the user;
 * none is a 401), with the SDK's Streamable HTTP client talking to it through `app.request`.
 */
async function setup(
  script: (request: ScriptedRequest) => ScriptedReply | Promise<ScriptedReply>,
  limits: Partial<McpHttpLimits> = {},
) {
  const home = tempHome();
  mkdirSync(join(home, 'agents'));
  writeFileSync(
    join(home, 'agents', 'finder.md'),
    '---\nname: finder\ndescription: Finds passages in your documents.\ntools: [search_documents]\n---\nFind.\n',
  );
  const store = openSqliteStore(':memory:');
  const cadre = await Cadre.create({
    env: { CADRE_HOME: home, CADRE_MODEL: 'scripted:test' },
    cwd: tempHome(),
    store,
    models: { 'scripted:test': new ScriptedModel(script) },
  });
  const routes = mcpHttpRoutes({ limits });
  const app = new Hono<McpHttpEnv>();
  app.use('/mcp', async (c, next) => {
    const user = c.req.header('x-user');
    if (!user) return c.json({ error: 'unauthorized' }, 401);
    c.set('userId', user);
    c.set('cadre', cadre);
    return next();
  });
  app.route('/mcp', routes);
  cleanups.push(() => cadre.close());
  cleanups.push(() => routes.closeAll());
  const connect = async (user: string) => {
    const client = new Client({ name: 'test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL('http://127.0.0.1/mcp'), {
      requestInit: { headers: { 'x-user': user } },
      fetch: async (url, init) => app.request(String(url), init),
    });
    await client.connect(transport);
    cleanups.push(() => client.close());
    return { client, transport };
  };
  return { cadre, app, connect, store, routes };
}

const searchTides = (request: ScriptedRequest): ScriptedReply =>
  request.toolResults.length
    ? { text: JSON.stringify(request.toolResults[0]!.output) }
    : { toolCalls: [{ name: 'search_documents', input: { query: 'tides' } }] };

describe('/mcp over Streamable HTTP', () => {
  it("lists the agents and runs a call for the caller, over the caller's own documents only", async () => {
    const { connect, store } = await setup(searchTides);
    store.database
      .prepare("INSERT INTO users (id, name, created_at) VALUES ('alice', 'alice', 0), ('bob', 'bob', 0)")
      .run();
    await ingestDocument(store.documents, 'alice', {
      filename: 'alice-notes.md',
      bytes: new TextEncoder().encode('# Notes\n\nThe tides at Brest rise twice a day.'),
    });
    const alice = await connect('alice');
    const { tools } = await alice.client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['finder', 'main', 'math']));

    const progress: string[] = [];
    const own = (await alice.client.callTool({ name: 'finder', arguments: { task: 'tides?' } }, undefined, {
      onprogress: (update) => progress.push(update.message ?? ''),
    })) as CallToolResult;
    expect(own.isError).toBe(false);
    expect(JSON.stringify(own.content)).toContain('Brest');
    expect(progress).toEqual(['finder started', 'finder calls search_documents', 'finder finished: ok']);

    const bob = await connect('bob');
    const other = (await bob.client.callTool({
      name: 'finder',
      arguments: { task: 'tides?' },
    })) as CallToolResult;
    expect(JSON.stringify(other)).not.toContain('Brest');
  });

  it("refuses a request without credentials, and one user's session to another", async () => {
    const { app, connect } = await setup(() => ({ text: 'hi' }));
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const anonymous = await app.request('/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(initialize),
    });
    expect(anonymous.status).toBe(401);

    const alice = await connect('alice');
    const stolen = await app.request('/mcp', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-user': 'mallory',
        'mcp-session-id': alice.transport.sessionId!,
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(stolen.status).toBe(404);
    expect(await stolen.text()).toContain('No such MCP session');
  });

  it('cancels the tree when the client cancels the call', async () => {
    const { cadre, connect, store } = await setup(() => ({ delayMs: 60_000, text: 'too late' }));
    const alice = await connect('alice');
    const controller = new AbortController();
    const call = alice.client.callTool({ name: 'math', arguments: { task: 'slow' } }, undefined, {
      signal: controller.signal,
      onprogress: () => controller.abort(),
    });
    await expect(call).rejects.toThrow(/abort/i);
    const status = () =>
      (
        store.database.prepare('SELECT status FROM runs ORDER BY started_at DESC LIMIT 1').get() as
          | { status?: string }
          | undefined
      )?.status;
    // Told when the tree's end is stored (its root's run-finish), not looked at on a timer.
    await whenStored(cadre.store, () => status() === 'cancelled', 'the cancelled run', 5_000);
    expect(status()).toBe('cancelled');
  });

  it('cancels the tree when the client goes away mid-call (its answer could never be delivered)', async () => {
    const { cadre, connect, store } = await setup(() => ({ delayMs: 60_000, text: 'too late' }));
    const alice = await connect('alice');
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    // As a client that quits (Claude Code closing, a crashed process): its connection closes, and no
    // notifications/cancelled is ever sent.
    const call = alice.client
      .callTool({ name: 'math', arguments: { task: 'slow' } }, undefined, { onprogress: () => started() })
      .catch((caught: unknown) => caught);
    await running;
    await alice.client.close();
    expect(String(await call)).toMatch(/Connection closed/);
    await expect
      .poll(async () => {
        await cadre.store.runs.flush();
        return store.database.prepare('SELECT agent, status FROM runs').all();
      })
      .toEqual([{ agent: 'math', status: 'cancelled' }]);
    expect(cadre.live.countFor('alice')).toBe(0);
  });

  it('answers the calls of a session it closes (evicted, or the server stopping) instead of leaving them hanging', async () => {
    const { connect, routes } = await setup(() => ({ delayMs: 60_000, text: 'too late' }), {
      maxSessionsPerUser: 1,
    });
    const startedCall = async (client: Client) => {
      let started!: () => void;
      const running = new Promise<void>((resolve) => {
        started = resolve;
      });
      // A short client timeout, so a call left without an answer fails the test quickly.
      const call = client
        .callTool({ name: 'math', arguments: { task: 'slow' } }, undefined, {
          timeout: 5000,
          onprogress: () => started(),
        })
        .catch((caught: unknown) => caught);
      await running;
      return { answer: call };
    };
    const first = await connect('alice');
    const evicted = await startedCall(first.client);
    // Past the limit of sessions per user: the first session is closed to make room.
    const second = await connect('alice');
    expect(await evicted.answer).toMatchObject({ isError: true, structuredContent: { status: 'cancelled' } });

    const stopping = await startedCall(second.client);
    await routes.closeAll();
    expect(await stopping.answer).toMatchObject({
      isError: true,
      structuredContent: { status: 'cancelled' },
    });
  });

  it('a call is a live tree like any other: the runs API stops it, and the caller gets isError', async () => {
    const { cadre, connect } = await setup(() => ({ delayMs: 60_000, text: 'too late' }));
    const alice = await connect('alice');
    let rootRunId: string | undefined;
    const call = alice.client.callTool({ name: 'math', arguments: { task: 'slow' } }, undefined, {
      onprogress: () => {
        rootRunId ??= cadre.live.all().find((tree) => tree.userId === 'alice')?.rootRunId;
      },
    });
    await new Promise<void>((resolve) => {
      const wait = () => (rootRunId ? resolve() : setTimeout(wait, 10));
      wait();
    });
    await expect(cadre.runs.cancel('bob', rootRunId!)).rejects.toThrow(/There is no run/);
    expect(await cadre.runs.cancel('alice', rootRunId!)).toEqual({ cancelled: true });
    const result = (await call) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ status: 'cancelled', runId: rootRunId });
  });

  it("limits the calls one user runs at once, over all their sessions; others' calls are not counted", async () => {
    // Every model answer is held until the calls below have met while two of alice's run.
    const answer = Promise.withResolvers<void>();
    const twoAsking = Promise.withResolvers<void>();
    let asked = 0;
    const { connect } = await setup(
      async () => {
        if (++asked === 2) twoAsking.resolve();
        await answer.promise;
        return { text: 'done' };
      },
      { maxConcurrentCalls: 2 },
    );
    const first = await connect('alice');
    const second = await connect('alice');
    const bob = await connect('bob');
    const call = (client: typeof first.client) =>
      client.callTool({ name: 'math', arguments: { task: 'slow' } }) as Promise<CallToolResult>;
    const running = [call(first.client), call(second.client)];
    // Both are running (each has its tree): a third of alice's is refused at once, bob's is not counted.
    await twoAsking.promise;
    const refused = await call(first.client);
    expect(refused.isError).toBe(true);
    expect(refused.content).toEqual([
      { type: 'text', text: expect.stringContaining('At most 2 agent calls may run at once') },
    ]);
    const bobs = call(bob.client);
    answer.resolve();
    for (const result of [...(await Promise.all(running)), await bobs]) expect(result.isError).toBe(false);
    // The slots are free again.
    expect((await call(second.client)).isError).toBe(false);
  });
});
