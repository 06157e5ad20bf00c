import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunTree } from '../../src/core/run-tree.ts';
import { type ApiFixtures, startApiFixtures } from '../fixtures/apis/api-fixtures.ts';
import { contentText, startOpenAIServer } from '../fixtures/openai-server.ts';
import { tempHome } from '../helpers/cli.ts';
import { cadreInProcess } from '../helpers/cli-in-process.ts';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(cleanups.map((cleanup) => cleanup()));
  cleanups = [];
});

describe('the tools section of config', () => {
  it('refuses an unknown key, naming the file and the field', async () => {
    const home = tempHome();
    const file = join(home, 'config.json');
    writeFileSync(file, JSON.stringify({ tools: { serchProvider: 'brave' } }));
    const result = await cadreInProcess(['agents', 'list'], { CADRE_HOME: home });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(file);
    expect(result.stderr).toMatch(/tools.*serchProvider/);
    writeFileSync(file, JSON.stringify({ tools: { searchProvider: 'bing' } }));
    const bad = await cadreInProcess(['agents', 'list'], { CADRE_HOME: home });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/tools\.searchProvider: .*"brave"/);
  });

  it('chooses the search provider, its key and its endpoint; the environment still wins', async () => {
    const fixtures: ApiFixtures = await startApiFixtures();
    cleanups.push(() => fixtures.close());
    const model = await startOpenAIServer(({ body }) => {
      const tool = body.messages.find((message) => message.role === 'tool');
      return tool
        ? { text: contentText(tool.content) }
        : {
            toolCalls: [
              { name: 'web_search', arguments: { query: contentText(body.messages.at(-1)?.content) } },
            ],
          };
    });
    cleanups.push(() => model.close());
    const home = tempHome();
    const env = { CADRE_HOME: home, CADRE_MODEL: 'compatible:m', CADRE_COMPATIBLE_BASE_URL: model.baseURL };
    const config = (tools: object) => writeFileSync(join(home, 'config.json'), JSON.stringify({ tools }));

    config({ searchProvider: 'brave' });
    const keyless = JSON.parse((await cadreInProcess(['agents', 'show', 'research', '--json'], env)).stdout);
    expect(keyless.tools.find((tool: { name: string }) => tool.name === 'web_search')).toMatchObject({
      available: false,
      enableWith: 'BRAVE_API_KEY',
    });

    config({
      searchProvider: 'brave',
      searchApiKey: 'brave-test-key',
      searchEndpoint: fixtures.servers.BRAVE.url,
    });
    const result = await cadreInProcess(
      ['ask', '--json', '--agent', 'research', 'Who was Alan Turing?'],
      env,
    );
    expect(result.code).toBe(0);
    const run = JSON.parse(result.stdout).run as RunTree;
    expect(run.toolCalls).toEqual([expect.objectContaining({ name: 'web_search', ok: true })]);
    expect(JSON.parse(result.stdout).answer).toContain('"provider":"brave"');

    // The environment wins over config: a wrong key in BRAVE_API_KEY is the one sent (a new question, so
    // the answer does not come from the response cache).
    const overridden = await cadreInProcess(
      ['ask', '--json', '--agent', 'research', 'Who was Ada Lovelace?'],
      {
        ...env,
        BRAVE_API_KEY: 'wrong-key',
      },
    );
    expect(JSON.parse(overridden.stdout).run.toolCalls[0].ok).toBe(false);
  });

  it('ignores a search endpoint in a project’s own config (it would be trusted on private addresses)', async () => {
    const home = tempHome();
    const cwd = tempHome();
    mkdirSync(join(cwd, '.cadre'));
    writeFileSync(
      join(cwd, '.cadre', 'config.json'),
      JSON.stringify({ tools: { searchProvider: 'searxng', searchEndpoint: 'http://169.254.169.254/' } }),
    );
    const shown = await cadreInProcess(['agents', 'show', 'research', '--json'], { CADRE_HOME: home }, cwd);
    const webSearch = JSON.parse(shown.stdout).tools.find(
      (tool: { name: string }) => tool.name === 'web_search',
    );
    expect(webSearch).toMatchObject({ available: false, enableWith: 'CADRE_ENDPOINT_SEARXNG' });
  });
});
