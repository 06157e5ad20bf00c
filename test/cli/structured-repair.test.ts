import { afterEach, describe, expect, it } from 'vitest';
import { repairPrompt } from '../../src/core/output-repair.ts';
import type { RunTree } from '../../src/core/run-tree.ts';
import { contentText, startOpenAIServer } from '../fixtures/openai-server.ts';
import { tempHome } from '../helpers/cli.ts';
import { cadreInProcess } from '../helpers/cli-in-process.ts';

const isMain = (system: string) => system.includes('## When to delegate');
const findings = {
  summary: 'Sessions are signed with HMAC.',
  relevantFiles: ['src/auth/session.ts'],
  keyFindings: ['verifySession uses timingSafeEqual'],
  codeSnippets: [],
};
const repairMarker = repairPrompt('').slice(0, 60);

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function askExplorer(repaired: boolean) {
  const server = await startOpenAIServer(({ body, system }) => {
    const last = body.messages.at(-1);
    if (isMain(system))
      return last?.role === 'user'
        ? { toolCalls: [{ name: 'explorer', arguments: { task: 'How are sessions signed?' } }] }
        : { text: 'They are HMAC-signed.' };
    if (last?.role === 'user' && contentText(last.content).startsWith(repairMarker))
      return { text: repaired ? JSON.stringify(findings) : '{"summary": 3}' };
    return { text: JSON.stringify({ summary: findings.summary }) };
  });
  close = server.close;
  const env = {
    CADRE_HOME: tempHome(),
    CADRE_MODEL: 'compatible:m',
    CADRE_COMPATIBLE_BASE_URL: server.baseURL,
  };
  const result = await cadreInProcess(['ask', '--json', 'How do sessions work here?'], env);
  const run = JSON.parse(result.stdout).run as RunTree;
  const repairs = server.requests.filter((request) =>
    contentText(request.body.messages.at(-1)?.content).startsWith(repairMarker),
  );
  return { run, env, repairs };
}

describe('an explorer whose answer does not match its output schema', () => {
  it('gets one repair attempt, told what was wrong, its tools declared but not callable', async () => {
    const { run, repairs } = await askExplorer(true);
    expect(repairs).toHaveLength(1);
    expect(contentText(repairs[0]!.body.messages.at(-1)?.content)).toMatch(/relevantFiles/);
    expect(repairs[0]!.body.tools?.length).toBeGreaterThan(0);
    expect(repairs[0]!.body.tool_choice).toBe('none');
    expect(run.children[0]).toMatchObject({ agent: 'explorer', status: 'ok', data: findings });
  });

  it('ends partial when the repair fails too, and the parent’s tree says partial', async () => {
    const { run, env, repairs } = await askExplorer(false);
    expect(repairs).toHaveLength(1);
    expect(run.children[0]).toMatchObject({ agent: 'explorer', status: 'partial' });
    expect(run.children[0]!.summary).toMatch(/structured output invalid/);
    const shown = await cadreInProcess(['runs', 'show', run.id], env);
    expect(shown.stdout).toMatch(/^└─ ◐ explorer .* partial /m);
  });
});
