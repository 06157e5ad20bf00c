import { afterEach, describe, expect, it } from 'vitest';
import type { RunTree } from '../../src/core/run-tree.ts';
import { type FixtureScript, startOpenAIServer } from '../fixtures/openai-server.ts';
import { runCli, tempHome } from '../helpers/cli.ts';

let servers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
});

async function askMath(script: FixtureScript, extraEnv: Record<string, string> = {}) {
  const server = await startOpenAIServer(script);
  servers.push(server);
  const env = {
    CADRE_HOME: tempHome(),
    CADRE_MODEL: 'compatible:fixture',
    CADRE_COMPATIBLE_BASE_URL: server.baseURL,
    ...extraEnv,
  };
  const result = await runCli(['ask', '--json', '--agent', 'math', 'Do the maths.'], env);
  return {
    result,
    server,
    json: () => JSON.parse(result.stdout) as { status: string; answer: string; run: RunTree },
  };
}

describe('hostile model output through the CLI', () => {
  it('a calculate call that would exhaust memory is a tool error; the run goes on and finishes', async () => {
    const { result, server, json } = await askMath(({ index }) =>
      index === 0
        ? { toolCalls: [{ name: 'calculate', arguments: { expression: 'size(zeros(32000,32000))' } }] }
        : { text: 'That matrix is too large to compute.' },
    );
    expect(result.code).toBe(0);
    expect(json().status).toBe('ok');
    expect(json().run.toolCalls.map((call) => call.ok)).toEqual([false]);
    const seen = JSON.stringify(server.requests[1]!.body.messages.at(-1));
    expect(seen).toMatch(/needs more than the calculator's 256 MB of memory and was stopped/);
  });
});
