import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startOpenAIServer } from '../fixtures/openai-server.ts';
import { tempHome } from '../helpers/cli.ts';
import { cadreInProcess } from '../helpers/cli-in-process.ts';

const isMain = (system: string) => system.includes('## When to delegate');

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

describe('CADRE_SUBAGENT_MODEL', () => {
  it('is the model of every sub-agent without one of its own; "model: inherit" still means the parent’s', async () => {
    const server = await startOpenAIServer(({ body, system }) => {
      const last = body.messages.at(-1);
      if (isMain(system))
        return last?.role === 'user'
          ? {
              toolCalls: [
                { name: 'math', arguments: { task: 'Compute 2 + 2.' } },
                { name: 'echo', arguments: { task: 'Say hi.' } },
              ],
            }
          : { text: 'Done.' };
      return { text: 'sub-agent answer' };
    });
    close = server.close;
    const home = tempHome();
    mkdirSync(join(home, 'agents'));
    writeFileSync(
      join(home, 'agents', 'echo.md'),
      '---\nname: echo\ndescription: Repeats things.\nmodel: inherit\n---\nYou are the echo agent.',
    );
    const env = {
      CADRE_HOME: home,
      CADRE_MODEL: 'compatible:big-model',
      CADRE_SUBAGENT_MODEL: 'compatible:cheap-model',
      CADRE_COMPATIBLE_BASE_URL: server.baseURL,
    };
    const result = await cadreInProcess(['ask', '--json', 'Add 2 and 2, and say hi'], env);
    expect(result.code).toBe(0);
    const modelOf = (marker: string) =>
      server.requests
        .filter((request) => request.system.includes(marker))
        .map((request) => request.body.model);
    expect(modelOf('## When to delegate')).toEqual(['big-model', 'big-model']);
    expect(modelOf("Cadre's maths sub-agent")).toEqual(['cheap-model']);
    expect(modelOf('You are the echo agent.')).toEqual(['big-model']);
    const run = JSON.parse(result.stdout).run as { children: Array<{ agent: string; model: string }> };
    expect(run.children.map((child) => [child.agent, child.model]).sort()).toEqual([
      ['echo', 'compatible:big-model'],
      ['math', 'compatible:cheap-model'],
    ]);

    const math = await cadreInProcess(['agents', 'show', 'math'], env);
    expect(math.stdout).toMatch(
      /^model: +compatible:cheap-model +\(no model of its own: CADRE_SUBAGENT_MODEL/m,
    );
    const echo = await cadreInProcess(['agents', 'show', 'echo'], env);
    expect(echo.stdout).toMatch(/^model: +compatible:big-model +\("model: inherit" in its definition/m);
    const main = await cadreInProcess(['agents', 'show', 'main', '--json'], env);
    expect(JSON.parse(main.stdout)).toMatchObject({ model: 'compatible:big-model' });
    const withoutSubagentModel = await cadreInProcess(['agents', 'show', 'math'], {
      ...env,
      CADRE_SUBAGENT_MODEL: '',
    });
    expect(withoutSubagentModel.stdout).toMatch(
      /^model: +compatible:big-model +\(no model of its own and no/m,
    );
  });
});
