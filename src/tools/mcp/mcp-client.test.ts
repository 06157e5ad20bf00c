import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpMcpServer } from '../../../test/fixtures/mcp/http-server.ts';
import { tempHome } from '../../../test/helpers/cli.ts';
import { Cadre } from '../../app/create-cadre.ts';
import type { CadreEvent } from '../../core/events.ts';
import { ScriptedModel, type ScriptedReply, type ScriptedRequest } from '../../models/scripted-model.ts';
import { openSqliteStore } from '../../store/sqlite/sqlite-store.ts';
import { McpServerConnection } from './server-connection.ts';

const FILESYSTEM_SERVER = fileURLToPath(
  import.meta.resolve('@modelcontextprotocol/server-filesystem/dist/index.js'),
);
const FLAKY_SERVER = fileURLToPath(new URL('../../../test/fixtures/mcp/flaky-server.ts', import.meta.url));
const HOSTILE_SERVER = fileURLToPath(
  new URL('../../../test/fixtures/mcp/hostile-server.ts', import.meta.url),
);

const BIG_OUTPUT_SERVER = fileURLToPath(
  new URL('../../../test/fixtures/mcp/big-output-server.ts', import.meta.url),
);

const opened: Cadre[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cadre of opened.splice(0)) await cadre.close();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A Cadre whose home has `config` and one agent file per entry of `agents` (name → tools). */
async function cadreWith(
  config: object,
  agents: Record<string, string[]>,
  script: (request: ScriptedRequest) => ScriptedReply,
) {
  const home = tempHome();
  writeFileSync(join(home, 'config.json'), JSON.stringify(config));
  mkdirSync(join(home, 'agents'));
  for (const [name, tools] of Object.entries(agents)) {
    writeFileSync(
      join(home, 'agents', `${name}.md`),
      `---\nname: ${name}\ndescription: test agent ${name}\ntools: [${tools.join(', ')}]\n---\nYou are ${name}.\n`,
    );
  }
  const model = new ScriptedModel(script);
  const cadre = await Cadre.create({
    env: { CADRE_HOME: home, CADRE_MODEL: 'scripted:test' },
    cwd: tempHome(),
    store: openSqliteStore(':memory:'),
    models: { 'scripted:test': model },
  });
  opened.push(cadre);
  return { cadre, model, home };
}

async function run(cadre: Cadre, agent: string, task: string) {
  const events: CadreEvent[] = [];
  const runtime = await cadre.runtime({ userId: 'local' });
  return runtime
    .run({ agent, task, onEvent: (event) => events.push(event) })
    .then((outcome) => ({ ...outcome, events }));
}

const toolResults = (events: CadreEvent[]) =>
  events.filter((event) => event.type === 'tool-result') as Array<
    Extract<CadreEvent, { type: 'tool-result' }>
  >;

describe('tools from MCP servers', () => {
  it('a sub-agent that names mcp__fs__read_text_file calls the real filesystem server and uses its result', async () => {
    const folder = tempHome();
    writeFileSync(join(folder, 'tides.txt'), 'High tide at 06:12.');
    const { cadre, model } = await cadreWith(
      { mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM_SERVER, folder] } } },
      { boss: ['reader'], reader: ['mcp__fs__read_text_file'] },
      (request) => {
        if (request.system.startsWith('You are boss.'))
          return request.toolResults.length
            ? { text: `Reader says: ${JSON.stringify(request.toolResults[0]!.output)}` }
            : { toolCalls: [{ name: 'reader', input: { task: 'Read tides.txt' } }] };
        return request.toolResults.length
          ? { text: `The file says: ${JSON.stringify(request.toolResults[0]!.output)}` }
          : { toolCalls: [{ name: 'mcp__fs__read_text_file', input: { path: join(folder, 'tides.txt') } }] };
      },
    );
    expect(cadre.mcp.server('fs')!.state).toBe('stopped');
    const { envelope, events, tree } = await run(cadre, 'boss', 'When is high tide?');
    expect(envelope.status).toBe('ok');
    expect(envelope.summary).toContain('High tide at 06:12.');
    const reader = tree.children[0]!;
    expect(reader).toMatchObject({ agent: 'reader', status: 'ok' });
    expect(reader.toolCalls).toMatchObject([{ name: 'mcp__fs__read_text_file', ok: true }]);
    // What reached the reader's model is marked as untrusted, like every other tool's output.
    const readerCall = model.calls.find(
      (call) => call.system.startsWith('You are reader.') && call.toolResults.length,
    )!;
    expect(JSON.stringify(readerCall.toolResults[0]!.output)).toContain(
      'untrusted-content tool=\\"mcp__fs__read_text_file\\"',
    );
    // The reader was offered the server's own input schema; its parent was not offered the tool at all.
    const offered = model.calls
      .find((call) => call.system.startsWith('You are reader.'))!
      .options.tools?.find((tool) => tool.name === 'mcp__fs__read_text_file');
    expect(JSON.stringify(offered)).toContain('"path"');
    expect(model.calls[0]!.toolNames).toEqual(['reader', 'continue_agent']);
    expect(toolResults(events).map((result) => [result.agent, result.name, result.ok])).toEqual([
      ['reader', 'mcp__fs__read_text_file', true],
      ['boss', 'reader', true],
    ]);
  });

  it("caps a server's tools, marks their descriptions as the server's words, and offers no colliding names", async () => {
    const { cadre, model } = await cadreWith(
      // Its listing of 8,002 tools is ~5 MB, one message: past the default maxMessageBytes.
      {
        mcpServers: {
          evil: {
            command: process.execPath,
            args: [HOSTILE_SERVER],
            maxTools: 50,
            maxMessageBytes: 16 << 20,
          },
        },
      },
      { worker: ['mcp__evil__*'] },
      (request) =>
        request.index === 0 ? { toolCalls: [{ name: 'mcp__evil__a_b', input: {} }] } : { text: 'done' },
    );
    const { events } = await run(cadre, 'worker', 'use the tools');
    const offered = model.calls[0]!.options.tools ?? [];
    // 8,002 listed: 50 offered, and neither of the two whose names collide.
    expect(offered).toHaveLength(50);
    expect(offered.map((tool) => tool.name)).not.toContain('mcp__evil__a_b');
    for (const tool of offered) {
      const description = (tool as { description?: string }).description ?? '';
      expect(description).toMatch(/^\[Untrusted: described by MCP server "evil"/);
      expect(description.length).toBeLessThan(1200);
    }
    // The ambiguous name is not run as either tool.
    const result = toolResults(events)[0]!;
    expect(result.ok).toBe(false);
    expect(JSON.stringify(result)).not.toContain('ran a.b');
    expect(JSON.stringify(result)).not.toContain('ran a_b');
  });

  it('an allow-list entry mcp__fs__* offers every tool of that server, and nothing else', async () => {
    const folder = tempHome();
    const { cadre, model } = await cadreWith(
      { mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM_SERVER, folder] } } },
      { browser: ['mcp__fs__*', 'calculate'] },
      () => ({ text: 'done' }),
    );
    await run(cadre, 'browser', 'look around');
    const names = model.calls[0]!.toolNames;
    expect(names).toEqual(
      expect.arrayContaining([
        'calculate',
        'mcp__fs__list_directory',
        'mcp__fs__read_text_file',
        'mcp__fs__write_file',
      ]),
    );
    expect(names.every((name) => name === 'calculate' || name.startsWith('mcp__fs__'))).toBe(true);
  });

  it("the built-in planner is offered every enabled tool: MCP servers', and the coding tools behind approvals", async () => {
    const folder = tempHome();
    const { cadre, model } = await cadreWith(
      { mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM_SERVER, folder] } } },
      {},
      () => ({ text: 'done' }),
    );
    await run(cadre, 'planner', 'plan something');
    const offered = model.calls[0]!.toolNames;
    expect(offered).toEqual(
      expect.arrayContaining([
        'update_plan',
        'web_search',
        'wikipedia_search',
        'calculate',
        'run_js',
        'read_file',
        'write_file',
        'edit_file',
        'bash',
        'mcp__fs__list_directory',
      ]),
    );
    // More than the 28 it had listed by hand, and still no sub-agent (it cannot delegate).
    expect(offered.length).toBeGreaterThan(32);
    for (const agent of ['research', 'math', 'explorer', 'planner']) expect(offered).not.toContain(agent);
    expect(offered).not.toContain('search_within_document');
  });

  it('an agent that does not name the tool cannot call it, and the server is not even started', async () => {
    const folder = tempHome();
    writeFileSync(join(folder, 'secret.txt'), 'TOP-SECRET-42');
    const { cadre, model } = await cadreWith(
      { mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM_SERVER, folder] } } },
      { plain: ['calculate'] },
      (request) =>
        request.index === 0
          ? { toolCalls: [{ name: 'mcp__fs__read_text_file', input: { path: join(folder, 'secret.txt') } }] }
          : { text: 'could not read it' },
    );
    const { envelope, events } = await run(cadre, 'plain', 'read the secret');
    expect(model.calls[0]!.toolNames).toEqual(['calculate']);
    const call = events.find((event) => event.type === 'tool-call');
    expect(call).toMatchObject({ name: 'mcp__fs__read_text_file', refused: expect.any(String) });
    expect(JSON.stringify(events)).not.toContain('TOP-SECRET-42');
    expect(envelope.summary).toBe('could not read it');
    expect(cadre.mcp.server('fs')!.state).toBe('stopped');
  });

  it('a server that crashes mid-call fails that call with a clear error; the run goes on and the next call restarts it', async () => {
    const { cadre, model } = await cadreWith(
      { mcpServers: { flaky: { command: process.execPath, args: [FLAKY_SERVER] } } },
      { worker: ['mcp__flaky__*'] },
      (request) => {
        if (request.index === 0) return { toolCalls: [{ name: 'mcp__flaky__pid', input: {} }] };
        if (request.index === 1) return { toolCalls: [{ name: 'mcp__flaky__crash', input: {} }] };
        if (request.index === 2) return { toolCalls: [{ name: 'mcp__flaky__pid', input: {} }] };
        return { text: 'survived' };
      },
    );
    const { envelope, events } = await run(cadre, 'worker', 'go');
    expect(envelope.status).toBe('ok');
    expect(envelope.summary).toBe('survived');
    const results = toolResults(events);
    expect(results.map((result) => [result.name, result.ok])).toEqual([
      ['mcp__flaky__pid', true],
      ['mcp__flaky__crash', false],
      ['mcp__flaky__pid', true],
    ]);
    expect(results[1]!.error).toMatch(/MCP server "flaky" exited during the call to crash/);
    expect(results[1]!.error).toContain('crashing on purpose');
    // The model was told what happened.
    expect(JSON.stringify(model.calls[2]!.prompt)).toContain('exited during the call to crash');
    const pids = [results[0], results[2]].map((result) => (result!.output as { text: string }).text);
    expect(pids[0]).not.toBe(pids[1]);
  });

  it('a call that takes longer than callTimeout fails with a timeout error', async () => {
    const { cadre } = await cadreWith(
      { mcpServers: { flaky: { command: process.execPath, args: [FLAKY_SERVER], callTimeout: 0.5 } } },
      { worker: ['mcp__flaky__hang'] },
      (request) =>
        request.index === 0 ? { toolCalls: [{ name: 'mcp__flaky__hang', input: {} }] } : { text: 'gave up' },
    );
    const { envelope, events } = await run(cadre, 'worker', 'go');
    expect(envelope.summary).toBe('gave up');
    expect(toolResults(events)[0]!.error).toBe('MCP server "flaky" did not answer hang within 0.5 s.');
  });

  it('a server that cannot start gives the tool call a clear error, not a crashed process', async () => {
    const { cadre } = await cadreWith(
      { mcpServers: { ghost: { command: '/nonexistent/mcp-server-binary' } } },
      { worker: ['mcp__ghost__lookup'] },
      (request) =>
        request.index === 0
          ? { toolCalls: [{ name: 'mcp__ghost__lookup', input: { q: 'x' } }] }
          : { text: 'no luck' },
    );
    const { envelope, events } = await run(cadre, 'worker', 'go');
    expect(envelope.status).toBe('ok');
    expect(toolResults(events)[0]!.error).toMatch(/^MCP server "ghost" could not start: .*ENOENT/);
    expect(cadre.mcp.server('ghost')!.state).toBe('failed');
  });

  it('reaches a Streamable HTTP server by url, sending its headers', async () => {
    const remote = await startHttpMcpServer('s3cret');
    cleanups.push(() => remote.close());
    const { cadre } = await cadreWith(
      { mcpServers: { remote: { url: remote.url, headers: { Authorization: 'Bearer s3cret' } } } },
      { caller: ['mcp__remote__shout'] },
      (request) =>
        request.toolResults.length
          ? { text: 'done' }
          : { toolCalls: [{ name: 'mcp__remote__shout', input: { text: 'quiet please' } }] },
    );
    const { events } = await run(cadre, 'caller', 'shout');
    expect(toolResults(events)).toMatchObject([{ ok: true, output: { text: 'QUIET PLEASE' } }]);
    expect(new Set(remote.seenAuthorization)).toEqual(new Set(['Bearer s3cret']));
  });

  it('a Claude Code agent file naming an MCP tool loads with it', async () => {
    const folder = tempHome();
    const { cadre, home } = await cadreWith(
      { mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM_SERVER, folder] } } },
      {},
      () => ({ text: 'ok' }),
    );
    const project = tempHome();
    mkdirSync(join(project, '.claude', 'agents'), { recursive: true });
    writeFileSync(
      join(project, '.claude', 'agents', 'lister.md'),
      '---\nname: lister\ndescription: Lists files.\ntools: Read, mcp__fs__list_directory\n---\nList.\n',
    );
    const withProject = await Cadre.create({
      env: { CADRE_HOME: home },
      cwd: project,
      store: openSqliteStore(':memory:'),
    });
    opened.push(withProject);
    expect(withProject.catalog.agents.get('lister')!.definition.tools).toEqual([
      'read_file',
      'mcp__fs__list_directory',
    ]);
    expect(cadre.catalog.problems).toEqual([]);
  });

  it('refuses an allow-list naming a server that is not configured, naming the file', async () => {
    const home = tempHome();
    mkdirSync(join(home, 'agents'));
    writeFileSync(
      join(home, 'agents', 'x.md'),
      '---\nname: x\ndescription: x\ntools: [mcp__nowhere__tool]\n---\n',
    );
    const cadre = await Cadre.create({
      env: { CADRE_HOME: home },
      cwd: tempHome(),
      store: openSqliteStore(':memory:'),
    });
    opened.push(cadre);
    expect(cadre.catalog.problems.map((problem) => problem.message).join('\n')).toMatch(
      /x\.md: tools: unknown tool "mcp__nowhere__tool"/,
    );
  });
});

describe('an MCP server that answers more than a message may hold', () => {
  const signal = new AbortController().signal;

  it('over stdio: the call fails at the limit as the bytes arrive, and the server answers again after', async () => {
    const connection = new McpServerConnection(
      'big',
      { command: process.execPath, args: [BIG_OUTPUT_SERVER], maxMessageBytes: 1024 * 1024 },
      'test',
    );
    cleanups.push(() => connection.close());
    await expect(connection.call('big', { megabytes: 3 }, signal)).rejects.toMatchObject({
      code: 'mcp_message_too_large',
    });
    expect((await connection.call('small', {}, signal)).content).toEqual([
      { type: 'text', text: 'small answer' },
    ]);
  });

  it('over stdio, by default: a 9 MB answer is refused (4 MiB)', async () => {
    const connection = new McpServerConnection(
      'big',
      { command: process.execPath, args: [BIG_OUTPUT_SERVER] },
      'test',
    );
    cleanups.push(() => connection.close());
    await expect(connection.call('big', { megabytes: 9 }, signal)).rejects.toMatchObject({
      code: 'mcp_message_too_large',
    });
  });

  it('over Streamable HTTP: the response body is cut at the limit', async () => {
    const server = await startHttpMcpServer('token');
    cleanups.push(server.close);
    const connection = new McpServerConnection(
      'remote',
      { url: server.url, headers: { authorization: 'Bearer token' }, maxMessageBytes: 1024 * 1024 },
      'test',
    );
    cleanups.push(() => connection.close());
    await expect(connection.call('big', { megabytes: 3 }, signal)).rejects.toMatchObject({
      code: 'mcp_message_too_large',
    });
    expect((await connection.call('shout', { text: 'hi' }, signal)).content).toEqual([
      { type: 'text', text: 'HI' },
    ]);
  });
});
