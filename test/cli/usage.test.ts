import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunTree } from '../../src/core/run-tree.ts';
import { type FixtureScript, startOpenAIServer } from '../fixtures/openai-server.ts';
import { tempHome } from '../helpers/cli.ts';
import { cadreInProcess } from '../helpers/cli-in-process.ts';

const isMain = (system: string) => system.includes('## When to delegate');

let servers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
});

/** Main delegates once to math, which answers; main then answers. */
const delegateOnce: FixtureScript = ({ body, system }) => {
  const last = body.messages.at(-1);
  if (isMain(system))
    return last?.role === 'user'
      ? { toolCalls: [{ name: 'math', arguments: { task: 'Compute 17 * 23.' } }] }
      : { text: 'The product is 391.' };
  return { text: '17 * 23 = 391, checked with a calculator of course.' };
};

async function ask(usage: 'when-asked' | 'never', config?: object) {
  const server = await startOpenAIServer(delegateOnce, { usage });
  servers.push(server);
  const home = tempHome();
  if (config) writeFileSync(join(home, 'config.json'), JSON.stringify(config));
  const env = {
    CADRE_HOME: home,
    CADRE_MODEL: 'compatible:fixture',
    CADRE_COMPATIBLE_BASE_URL: server.baseURL,
  };
  const result = await cadreInProcess(['ask', '--json', 'What is 17 times 23?'], env);
  const output = JSON.parse(result.stdout) as { status: string; run: RunTree; usage: RunTree['usage'] };
  return { result, output, server };
}

describe('token usage from an OpenAI-compatible server', () => {
  it('asks for usage in streamed answers, so own and subtree usage are the server’s figures', async () => {
    const { result, output, server } = await ask('when-asked');
    expect(result.code).toBe(0);
    expect(server.requests.every((request) => request.body.stream_options?.include_usage)).toBe(true);
    const math = output.run.children[0]!;
    // The fixture reports 100 + request index prompt tokens and 20 completion tokens per call.
    expect(math.usage).toEqual({ inputTokens: 101, outputTokens: 20, totalTokens: 121 });
    expect(output.run.usage).toEqual({ inputTokens: 100 + 102, outputTokens: 40, totalTokens: 242 });
    expect(output.run.subtreeUsage.totalTokens).toBe(363);
    expect(output.usage).toEqual(output.run.subtreeUsage);
  });

  it('estimates usage from the text when a server sends none, and marks it estimated', async () => {
    const { result, output } = await ask('never');
    expect(result.code).toBe(0);
    const math = output.run.children[0]!;
    expect(math.usage.inputTokens).toBeGreaterThan(50);
    expect(math.usage.outputTokens).toBeGreaterThan(5);
    expect(math.usage.estimated).toBe(true);
    expect(output.run.usage.estimated).toBe(true);
    expect(output.run.subtreeUsage).toMatchObject({ estimated: true });
    expect(output.run.subtreeUsage.totalTokens).toBe(output.run.usage.totalTokens + math.usage.totalTokens);
  });

  it.each(['when-asked', 'never'] as const)(
    'a small treeBudget stops the tree with status budget (usage %s)',
    async (usage) => {
      const { result, output } = await ask(usage, { limits: { treeBudget: 50 } });
      expect(output.status).toBe('budget');
      expect(result.code).toBe(1);
      expect(output.run.status).toBe('budget');
      for (const child of output.run.children) expect(child.status).toBe('budget');
    },
  );
});
