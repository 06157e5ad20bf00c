import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { type FixtureScript, startOpenAIServer } from '../fixtures/openai-server.ts';
import { CLI_ENTRY, childEnv, fixtureModelEnv, runCli, tempHome } from '../helpers/cli.ts';

const isMain = (system: string) => system.includes('## When to delegate');
const isMath = (system: string) => system.includes("Cadre's maths sub-agent");

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** `cadre mcp` in a child process, with the SDK's own client connected to it over stdio. */
async function connect(script: FixtureScript) {
  const model = await startOpenAIServer(script);
  cleanups.push(() => model.close());
  const env = {
    PATH: process.env.PATH ?? '',
    ...fixtureModelEnv(model),
  };
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI_ENTRY, 'mcp'],
    // What every cadre process a test starts gets (the compile cache; a database in the PostgreSQL mode).
    env: childEnv(env),
    cwd: tempHome(),
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  // Anything on stdout that is not a protocol message shows up here.
  const protocolErrors: Error[] = [];
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(transport);
  transport.onerror = (error) => protocolErrors.push(error);
  // Progress as it came over the wire. The SDK client hands notifications to their handlers a microtask
  // later than responses, so one read in the same chunk as the response is dropped there ("unknown token").
  const wireProgress: string[] = [];
  const deliver = transport.onmessage;
  transport.onmessage = (message: JSONRPCMessage) => {
    if ('method' in message && message.method === 'notifications/progress')
      wireProgress.push(String(message.params?.message));
    deliver?.(message);
  };
  cleanups.push(() => client.close());
  return { client, model, env, protocolErrors, wireProgress, stderr: () => stderr };
}

const delegateToMath: FixtureScript = ({ body, system }) => {
  const last = body.messages.at(-1);
  if (isMain(system))
    return last?.role === 'user'
      ? { toolCalls: [{ name: 'math', arguments: { task: 'Compute 17 * 23.' } }] }
      : { text: 'The product is 391.' };
  if (isMath(system))
    return last?.role === 'user'
      ? { toolCalls: [{ name: 'calculate', arguments: { expression: '17 * 23' } }] }
      : { text: '17 * 23 = 391' };
  return { status: 400 };
};

describe('cadre mcp (stdio) from the SDK client', () => {
  it('lists every enabled agent as a tool with {task} plus its declared inputs', async () => {
    const { client } = await connect(delegateToMath);
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(
      expect.arrayContaining(['main', 'math', 'research', 'explorer', 'planner', 'analyze_document']),
    );
    const analyze = tools.find((tool) => tool.name === 'analyze_document')!;
    expect(analyze.inputSchema.required).toEqual(['task', 'document_id']);
    expect(Object.keys(analyze.inputSchema.properties ?? {})).toEqual(['task', 'document_id']);
    const math = tools.find((tool) => tool.name === 'math')!;
    expect(math.description).toMatch(/calculation/);
    expect(math.outputSchema?.properties).toHaveProperty('status');
  });

  it('runs an agent tree for a call, returns the envelope as structuredContent, and reports progress', async () => {
    const { client, protocolErrors, wireProgress, stderr } = await connect(delegateToMath);
    const progress: string[] = [];
    const result = (await client.callTool(
      { name: 'main', arguments: { task: 'What is 17 times 23?' } },
      undefined,
      { onprogress: (update) => progress.push(update.message ?? '') },
    )) as CallToolResult;
    expect(result.isError).toBe(false);
    expect(result.content).toEqual([{ type: 'text', text: 'The product is 391.' }]);
    expect(result.structuredContent).toMatchObject({
      status: 'ok',
      summary: 'The product is 391.',
      runId: expect.any(String),
      subtreeUsage: { totalTokens: expect.any(Number) },
    });
    expect(wireProgress).toEqual([
      'main started',
      'main calls math',
      'sub-agent math started: Compute 17 * 23.',
      'math calls calculate',
      'sub-agent math finished: ok',
      'main finished: ok',
    ]);
    expect(progress.length).toBeGreaterThan(0);
    expect(wireProgress.slice(0, progress.length)).toEqual(progress);
    expect(protocolErrors).toEqual([]);
    expect(stderr()).toBe('');
  });

  it('sets isError for a run that did not end ok and for bad arguments', async () => {
    const { client } = await connect(() => ({ status: 400 }));
    const failed = (await client.callTool({ name: 'math', arguments: { task: '1+1' } })) as CallToolResult;
    expect(failed.isError).toBe(true);
    expect(failed.structuredContent).toMatchObject({ status: 'error' });
    expect((failed.content[0] as { text: string }).text).toMatch(/^\[error\] /);
    const bad = (await client.callTool({
      name: 'analyze_document',
      arguments: { task: 'x' },
    })) as CallToolResult;
    expect(bad.isError).toBe(true);
    expect(bad.content).toEqual([{ type: 'text', text: expect.stringContaining('document_id') }]);
    const unknown = (await client.callTool({ name: 'nobody', arguments: { task: 'x' } })) as CallToolResult;
    expect(unknown.content).toEqual([
      { type: 'text', text: expect.stringContaining('There is no agent named "nobody"') },
    ]);
  });

  it("cancels the run tree on the client's notifications/cancelled, and records it as cancelled", async () => {
    const { client, env } = await connect(({ system }) =>
      isMain(system)
        ? { toolCalls: [{ name: 'math', arguments: { task: 'Think very hard.' } }] }
        : { hang: true },
    );
    const controller = new AbortController();
    const call = client.callTool({ name: 'main', arguments: { task: 'Take forever' } }, undefined, {
      signal: controller.signal,
      onprogress: (update) => {
        if (update.message?.startsWith('sub-agent math started')) setImmediate(() => controller.abort());
      },
    });
    await expect(call).rejects.toThrow(/abort/i);
    // Both runs end cancelled in the store.
    const deadline = Date.now() + 10_000;
    let runs: Array<{ agent: string; status: string; children?: unknown[] }> = [];
    while (Date.now() < deadline) {
      const listed = await runCli(['runs', 'list', '--json'], env);
      runs = JSON.parse(listed.stdout || '[]').runs ?? JSON.parse(listed.stdout || '[]');
      if (runs.length && runs.every((run) => run.status !== 'running')) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(runs).toMatchObject([{ agent: 'main', status: 'cancelled' }]);
    const shown = await runCli(['runs', 'show', (runs[0] as unknown as { id: string }).id, '--json'], env);
    expect(JSON.parse(shown.stdout).children).toMatchObject([{ agent: 'math', status: 'cancelled' }]);
  });
});
