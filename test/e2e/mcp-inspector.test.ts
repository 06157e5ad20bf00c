import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startOpenAIServer } from '../fixtures/openai-server.ts';
import { CLI_ENTRY, tempHome } from '../helpers/cli.ts';

/** The MCP Inspector's launcher (npm `@modelcontextprotocol/inspector`, a devDependency); `--cli` is its CLI mode. */
const INSPECTOR = fileURLToPath(
  new URL(
    '../../node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js',
    import.meta.url,
  ),
);

const servers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

function inspector(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [INSPECTOR, '--cli', ...args], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: tempHome(),
      MCP_CATALOG_PATH: join(tempHome(), 'mcp.json'),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
}

describe("cadre mcp from the MCP Inspector's CLI mode", () => {
  it('lists the agents and calls one', async () => {
    const model = await startOpenAIServer(({ body }) =>
      body.messages.at(-1)?.role === 'user'
        ? { toolCalls: [{ name: 'calculate', arguments: { expression: '6 * 7' } }] }
        : { text: '6 * 7 = 42' },
    );
    servers.push(model);
    const cadre = [
      '-e',
      `CADRE_HOME=${tempHome()}`,
      '-e',
      `CADRE_COMPATIBLE_BASE_URL=${model.baseURL}`,
      '--',
      process.execPath,
      CLI_ENTRY,
      'mcp',
      '--model',
      'compatible:fixture',
    ];
    const listed = await inspector(['--method', 'tools/list', ...cadre], {});
    expect(listed.code, listed.stderr).toBe(0);
    const names = (JSON.parse(listed.stdout).tools as Array<{ name: string }>).map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['main', 'math', 'research']));

    const called = await inspector(
      ['--method', 'tools/call', '--tool-name', 'math', '--tool-arg', 'task=What is 6 times 7?', ...cadre],
      {},
    );
    expect(called.code, called.stderr).toBe(0);
    const result = JSON.parse(called.stdout);
    expect(result.isError).toBe(false);
    expect(result.structuredContent).toMatchObject({ status: 'ok', summary: '6 * 7 = 42' });
  });
});
