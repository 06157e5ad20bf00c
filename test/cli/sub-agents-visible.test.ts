import { afterEach, describe, expect, it } from 'vitest';
import type { RunTree } from '../../src/core/run-tree.ts';
import { startOpenAIServer } from '../fixtures/openai-server.ts';
import { tempHome } from '../helpers/cli.ts';
import { cadreInProcess } from '../helpers/cli-in-process.ts';

const isMain = (system: string) => system.includes('## When to delegate');
const LONG_SUMMARY = `17 * 23 = 391. ${'The working is shown step by step. '.repeat(20)}THE END OF THE SUMMARY`;

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function setup() {
  const server = await startOpenAIServer(({ body, system }) => {
    const last = body.messages.at(-1);
    if (isMain(system))
      return last?.role === 'user'
        ? { toolCalls: [{ name: 'math', arguments: { task: 'Compute 17 * 23.' } }] }
        : { text: 'The product is 391.' };
    return last?.role === 'user'
      ? { toolCalls: [{ name: 'calculate', arguments: { expression: '17 * 23' } }] }
      : { text: LONG_SUMMARY };
  });
  close = server.close;
  return { CADRE_HOME: tempHome(), CADRE_MODEL: 'compatible:m', CADRE_COMPATIBLE_BASE_URL: server.baseURL };
}

describe('sub-agents seen from the terminal', () => {
  it('runs show prints each tool call with its output and each sub-agent’s summary, trimmed unless --verbose', async () => {
    const env = await setup();
    const asked = await cadreInProcess(['ask', '--json', 'What is 17 times 23?'], env);
    const run = JSON.parse(asked.stdout).run as RunTree;
    const shown = await cadreInProcess(['runs', 'show', run.id], env);
    expect(shown.code).toBe(0);
    const lines = shown.stdout.split('\n');
    const math = lines.findIndex((line) => line.startsWith('└─ ✓ math'));
    expect(math).toBeGreaterThan(0);
    const below = lines.slice(math + 1).join('\n');
    expect(below).toMatch(/→ calculate \{"expression":"17 \* 23"\} ✓ \d+ms/);
    expect(below).toMatch(/^ {7}.*391/m);
    expect(below).toMatch(/summary: 17 \* 23 = 391\. The working/);
    expect(below).not.toContain('THE END OF THE SUMMARY');
    expect(shown.stdout.trimEnd().endsWith('The product is 391.')).toBe(true);

    const verbose = await cadreInProcess(['runs', 'show', run.id, '--verbose'], env);
    expect(verbose.stdout).toContain('THE END OF THE SUMMARY');
  });

  it('chat --session shows the earlier turns with their trees of runs', async () => {
    const env = await setup();
    const asked = await cadreInProcess(['ask', '--json', 'What is 17 times 23?'], env);
    const { sessionId } = JSON.parse(asked.stdout) as { sessionId: string };
    const chat = await cadreInProcess(['chat', '--session', sessionId], env, undefined, '');
    expect(chat.code).toBe(0);
    const replay = chat.stderr;
    expect(replay).toContain('you> What is 17 times 23?');
    expect(replay).toMatch(/^✓ main .* ok/m);
    expect(replay).toMatch(/^└─ ✓ math {2}"Compute 17 \* 23\."/m);
    expect(replay).toContain('The product is 391.');
    expect(replay.indexOf('you> What is 17')).toBeLessThan(replay.indexOf('└─ ✓ math'));
  });
});
