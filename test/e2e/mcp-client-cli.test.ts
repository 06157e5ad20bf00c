import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { processAlive } from '../../src/store/run-owner.ts';
import { contentText, startOpenAIServer } from '../fixtures/openai-server.ts';
import { fixtureModelEnv, runCli, tempHome } from '../helpers/cli.ts';

const FLAKY_SERVER = fileURLToPath(new URL('../fixtures/mcp/flaky-server.ts', import.meta.url));

const servers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

describe('MCP servers under cadre ask', () => {
  it('starts the server for the run that uses it, and stops it when cadre exits', async () => {
    const model = await startOpenAIServer(({ body }) => {
      const last = body.messages.at(-1);
      return last?.role === 'tool'
        ? { text: `server pid ${contentText(last.content).match(/\d{2,}/)?.[0]}` }
        : { toolCalls: [{ name: 'mcp__flaky__pid', arguments: {} }] };
    });
    servers.push(model);
    const home = tempHome();
    writeFileSync(
      join(home, 'config.json'),
      JSON.stringify({ mcpServers: { flaky: { command: process.execPath, args: [FLAKY_SERVER] } } }),
    );
    mkdirSync(join(home, 'agents'));
    writeFileSync(
      join(home, 'agents', 'worker.md'),
      '---\nname: worker\ndescription: works\ntools: [mcp__flaky__pid]\n---\nWork.\n',
    );
    const result = await runCli(
      ['ask', '--agent', 'worker', '--json', 'Which process answers?'],
      fixtureModelEnv(model, home),
    );
    expect(result.code, result.stderr).toBe(0);
    const answer = JSON.parse(result.stdout).answer as string;
    const pid = Number(answer.match(/server pid (\d+)/)?.[1]);
    expect(pid).toBeGreaterThan(0);
    // cadre has exited (runCli resolved on close); the server it started is gone too.
    expect(processAlive(pid)).toBe(false);
    expect(result.ms).toBeLessThan(15_000);
  });
});
