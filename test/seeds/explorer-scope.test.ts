import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { RunTree } from '../../src/core/run-tree.ts';
import { contentText, type FixtureScript } from '../fixtures/openai-server.ts';
import { cadreInProcess, fixtureCadre } from '../helpers/cli-in-process.ts';

const REPO = fileURLToPath(new URL('../fixtures/repo', import.meta.url));
const isMain = (system: string) => system.includes('## When to delegate');

const ANSWER = {
  summary: 'Orders are priced in pricing.ts.',
  relevantFiles: ['src/orders/pricing.ts'],
  keyFindings: [],
  codeSnippets: [],
};

describe('explorer takes scope (a folder or a glob) and maxFiles, held in code', () => {
  it('sees only files in scope and reads at most maxFiles of them', async () => {
    const script: FixtureScript = ({ body, system }) => {
      const toolMessages = body.messages.filter((message) => message.role === 'tool').length;
      if (isMain(system)) {
        if (!toolMessages)
          return {
            toolCalls: [
              {
                name: 'explorer',
                arguments: { task: 'How are orders priced?', scope: 'src/orders', maxFiles: 2 },
              },
            ],
          };
        return { text: 'Pricing lives in src/orders/pricing.ts.' };
      }
      if (!toolMessages)
        return {
          toolCalls: [
            { name: 'glob', arguments: { pattern: '**/*.ts' } },
            { name: 'grep', arguments: { pattern: 'export' } },
            { name: 'read_file', arguments: { path: 'src/auth/session.ts' } },
            { name: 'list_dir', arguments: { path: 'src/auth' } },
            { name: 'read_file', arguments: { path: 'src/orders/order-service.ts' } },
          ],
        };
      if (toolMessages === 5)
        return {
          toolCalls: [
            { name: 'read_file', arguments: { path: 'src/orders/pricing.ts' } },
            { name: 'read_file', arguments: { path: 'src/orders/order-service.ts', offset: 2 } },
          ],
        };
      if (toolMessages === 7)
        return { toolCalls: [{ name: 'read_file', arguments: { path: 'src/orders/repository.ts' } }] };
      return { text: JSON.stringify(ANSWER) };
    };
    const { server, env } = await fixtureCadre(script);
    const result = await cadreInProcess(
      ['ask', '--json', '--workspace', REPO, 'How are orders priced?'],
      env,
    );
    expect(result.code).toBe(0);

    const explorer = (JSON.parse(result.stdout).run as RunTree).children[0]!;
    expect(explorer.agent).toBe('explorer');
    const calls = explorer.toolCalls.map((call) => [
      call.name,
      (call.input as { path?: string }).path,
      call.ok,
    ]);
    expect(calls).toEqual([
      ['glob', undefined, true],
      ['grep', undefined, true],
      ['read_file', 'src/auth/session.ts', false],
      ['list_dir', 'src/auth', false],
      ['read_file', 'src/orders/order-service.ts', true],
      ['read_file', 'src/orders/pricing.ts', true],
      ['read_file', 'src/orders/order-service.ts', true],
      ['read_file', 'src/orders/repository.ts', false],
    ]);
    expect(explorer.toolCalls[2]!.error).toMatch(/outside this run's scope "src\/orders"/);
    expect(explorer.toolCalls[7]!.error).toMatch(/at most 2 files \(maxFiles\)/);
    expect(explorer.data).toEqual(ANSWER);

    // What glob and grep handed the explorer: files under src/orders only.
    const explorerSecond = server.requests.find(
      (request) =>
        !isMain(request.system) &&
        request.body.messages.filter((message) => message.role === 'tool').length === 5,
    )!;
    const [globOut, grepOut] = explorerSecond.body.messages
      .filter((message) => message.role === 'tool')
      .map((message) => contentText(message.content));
    expect(globOut).toContain('src/orders/pricing.ts');
    expect(globOut).not.toContain('src/auth');
    expect(grepOut).toContain('src/orders/');
    expect(grepOut).not.toContain('src/auth');
    // The explorer's task message carries its inputs.
    expect(
      contentText(explorerSecond.body.messages.find((message) => message.role === 'user')?.content),
    ).toMatch(/scope: "src\/orders"[\s\S]*maxFiles: 2/);
  });

  it('a glob scope admits only matching files', async () => {
    const { runScope } = await import('../../src/tools/workspace/run-scope.ts');
    const scope = runScope({ runId: 'run_x', inputs: { scope: 'src/**/*service.ts' } });
    expect(scope.includes('src/orders/order-service.ts')).toBe(true);
    expect(scope.includes('src/orders/pricing.ts')).toBe(false);
    expect(scope.includesFolder('src/orders')).toBe(true);
    expect(runScope({ runId: 'run_y', inputs: {} }).includes('anything/at/all.ts')).toBe(true);
  });
});
