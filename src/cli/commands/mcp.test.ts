import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempHome } from '../../../test/helpers/cli.ts';
import { main } from '../main.ts';

const FLAKY_SERVER = fileURLToPath(new URL('../../../test/fixtures/mcp/flaky-server.ts', import.meta.url));

async function cli(args: string[], options: { home: string; cwd: string }) {
  let stdout = '';
  let stderr = '';
  const sink = (append: (text: string) => void) =>
    new Writable({
      write(chunk, _encoding, done) {
        append(String(chunk));
        done();
      },
    });
  const code = await main(args, {
    stdout: sink((text) => {
      stdout += text;
    }),
    stderr: sink((text) => {
      stderr += text;
    }),
    env: { CADRE_HOME: options.home },
    cwd: options.cwd,
  });
  return { code, stdout, stderr };
}

/** A folder as a cloned repository would be: its own `.mcp.json` naming a command to start. */
function projectWithMcpJson() {
  const home = tempHome();
  const project = tempHome();
  const mcpJson = {
    mcpServers: { flaky: { command: process.execPath, args: [FLAKY_SERVER], extra: 'ignored' } },
  };
  writeFileSync(join(project, '.mcp.json'), JSON.stringify(mcpJson));
  return { home, project, mcpJson };
}

/** A CADRE_HOME whose own config names a working server and one whose command does not exist. */
function homeWithFlakyAndGhost(): string {
  const home = tempHome();
  const mcpServers = {
    flaky: { command: process.execPath, args: [FLAKY_SERVER] },
    ghost: { command: '/nonexistent/server' },
  };
  writeFileSync(join(home, 'config.json'), JSON.stringify({ mcpServers }));
  return home;
}

describe('cadre mcp list · trust · untrust', () => {
  it("refuses a project's .mcp.json command until the folder is trusted, and again when it changes", async () => {
    const { home, project, mcpJson } = projectWithMcpJson();

    const refused = await cli(['mcp', 'list', '--json'], { home, cwd: project });
    expect(refused.code).toBe(0);
    expect(JSON.parse(refused.stdout)).toMatchObject({ servers: [], trust: 'untrusted' });
    expect(JSON.parse(refused.stdout).refused).toEqual([`flaky (${join(project, '.mcp.json')})`]);

    const trusted = await cli(['mcp', 'trust'], { home, cwd: project });
    expect(trusted.stdout).toContain(`MCP server flaky: ${process.execPath} ${FLAKY_SERVER}`);
    expect(JSON.parse(readFileSync(join(home, 'trusted-folders.json'), 'utf8')).folders).toHaveProperty(
      project,
    );

    const listed = await cli(['mcp', 'list'], { home, cwd: project });
    expect(listed.stdout).toContain('flaky  (stdio)');
    // What the model is offered: the server's own words, marked as the server's.
    expect(listed.stdout).toMatch(
      /mcp__flaky__echo {2}\[Untrusted: described by MCP server "flaky".*\] Echoes its text back\./,
    );
    expect(listed.stdout).toContain('mcp__flaky__crash');

    // A change to what the folder asks to start (a pull, an edit) needs trusting again.
    mcpJson.mcpServers.flaky.args.push('--something-else');
    writeFileSync(join(project, '.mcp.json'), JSON.stringify(mcpJson));
    const changed = await cli(['mcp', 'list', '--json'], { home, cwd: project });
    expect(JSON.parse(changed.stdout)).toMatchObject({ servers: [], trust: 'changed' });

    await cli(['mcp', 'trust'], { home, cwd: project });
    await cli(['mcp', 'untrust'], { home, cwd: project });
    const untrusted = await cli(['mcp', 'list', '--json'], { home, cwd: project });
    expect(JSON.parse(untrusted.stdout)).toMatchObject({ servers: [], trust: 'untrusted' });
  });

  it("warns that a project's .cadre/config.json servers are ignored, saying how to allow them", async () => {
    const home = tempHome();
    const project = tempHome();
    mkdirSync(join(project, '.cadre'));
    writeFileSync(
      join(project, '.cadre', 'config.json'),
      JSON.stringify({ mcpServers: { evil: { command: 'curl', args: ['http://example.invalid'] } } }),
    );
    const result = await cli(['mcp', 'list'], { home, cwd: project });
    expect(result.stdout).toContain(
      `Not used until you trust this folder ("cadre mcp trust"): evil (${join(project, '.cadre', 'config.json')})`,
    );
    expect(result.stderr).toContain(
      `${join(project, '.cadre', 'config.json')}: mcpServers evil ignored: a project's own files may not name commands or servers until you trust the folder; run "cadre mcp trust" in ${project}`,
    );
  });

  it('user-level servers start without trust; one that cannot start says why', async () => {
    const home = homeWithFlakyAndGhost();
    const listed = await cli(['mcp', 'list', '--json'], { home, cwd: tempHome() });
    const servers = JSON.parse(listed.stdout).servers;
    expect(servers).toMatchObject([
      {
        name: 'flaky',
        state: 'ready',
        tools: expect.arrayContaining([
          { name: 'mcp__flaky__pid', description: expect.stringMatching(/\] The server's process id\.$/) },
        ]),
      },
      { name: 'ghost', state: 'failed', error: expect.stringContaining('could not start') },
    ]);
  });

  it('agents show lists the MCP tools an agent may use, and why a server is not available', async () => {
    const home = homeWithFlakyAndGhost();
    mkdirSync(join(home, 'agents'));
    writeFileSync(
      join(home, 'agents', 'worker.md'),
      '---\nname: worker\ndescription: works\ntools: [mcp__flaky__*, mcp__ghost__lookup]\n---\nWork.\n',
    );
    const shown = await cli(['agents', 'show', 'worker'], { home, cwd: tempHome() });
    expect(shown.stdout).toContain(
      '  - mcp__flaky__echo\n  - mcp__flaky__crash\n  - mcp__flaky__hang\n  - mcp__flaky__pid\n',
    );
    expect(shown.stdout).toMatch(
      / {2}- mcp__ghost__lookup {2}\(not offered: MCP server "ghost" could not start: .*ENOENT/,
    );
  });

  it('names the file and field of a bad server entry', async () => {
    const home = tempHome();
    writeFileSync(join(home, 'config.json'), JSON.stringify({ mcpServers: { broken: { args: ['x'] } } }));
    const result = await cli(['mcp', 'list'], { home, cwd: tempHome() });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(
      `${join(home, 'config.json')}: mcpServers.broken: an MCP server: {command, args?, env?} (stdio) or {url, headers?} (Streamable HTTP)`,
    );
  });
});
