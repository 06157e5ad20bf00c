import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunTree } from '../../src/core/run-tree.ts';
import { contentText, type FixtureScript } from '../fixtures/openai-server.ts';
import { cadreInProcess, fixtureCadre } from '../helpers/cli-in-process.ts';

const HELPER = `---
name: helper
description: Writes long notes.
tools: [calculate]
maxOutputTokens: 512
maxResultChars: 300
---
I am the helper.
`;

async function setup(script: FixtureScript, config: object = {}) {
  const fixture = await fixtureCadre(script, config);
  mkdirSync(join(fixture.home, 'agents'));
  writeFileSync(join(fixture.home, 'agents', 'helper.md'), HELPER);
  return fixture;
}

const isHelper = (system: string) => system.includes('I am the helper.');
const LONG_NOTE = `${'The helper wrote a very long note. '.repeat(40)}END`;

describe("limits the seeds name, through 'cadre ask'", () => {
  it('sends 4,096 max output tokens by default, a definition its own, and cuts what a sub-agent hands back', async () => {
    const { server, env } = await setup(({ body, system }) => {
      const last = body.messages.at(-1);
      if (isHelper(system)) return { text: LONG_NOTE };
      if (last?.role === 'user')
        return { toolCalls: [{ name: 'helper', arguments: { task: 'Write notes.' } }] };
      return { text: 'Done.' };
    });
    const result = await cadreInProcess(['ask', '--json', 'Take notes.'], env);
    expect(result.code).toBe(0);
    const main = server.requests.filter((request) => !isHelper(request.system));
    const helper = server.requests.filter((request) => isHelper(request.system));
    expect(main.map((request) => (request.body as { max_tokens?: number }).max_tokens)).toEqual([4096, 4096]);
    expect(helper.map((request) => (request.body as { max_tokens?: number }).max_tokens)).toEqual([512]);

    // The parent model saw at most 300 characters of the helper's answer, and a note saying so.
    const toolMessage = main[1]!.body.messages.find((message) => message.role === 'tool');
    const seen = contentText(toolMessage?.content);
    expect(seen.length).toBeLessThanOrEqual(300);
    expect(seen).toContain('maxResultChars 300');
    expect(seen).not.toContain('END');
    // The run tree (and the store) keep the whole answer.
    const run = JSON.parse(result.stdout).run as RunTree;
    expect(run.children[0]!.summary).toBe(LONG_NOTE);
  });

  it('agents show prints the limits an agent runs with: its own, else the configured ones', async () => {
    const { env } = await setup(() => ({ text: 'Hi.' }), { limits: { modelCallTimeoutSeconds: 42 } });
    const helper = await cadreInProcess(['agents', 'show', 'helper'], env);
    expect(helper.stdout).toContain(
      'limits:   maxOutputTokens 512, modelCallTimeout 42 s, maxResultChars 300',
    );
    const math = await cadreInProcess(['agents', 'show', 'math'], env);
    expect(math.stdout).toContain(
      'limits:   maxOutputTokens 4096, modelCallTimeout 42 s, maxResultChars 12000',
    );
  });

  it('config limits.maxOutputTokens applies to agents whose definition names none', async () => {
    const { server, env } = await setup(() => ({ text: 'Hi.' }), { limits: { maxOutputTokens: 1000 } });
    expect((await cadreInProcess(['ask', 'Hello'], env)).code).toBe(0);
    expect((server.requests[0]!.body as { max_tokens?: number }).max_tokens).toBe(1000);
  });

  it('ends a run as timeout when one model call passes limits.modelCallTimeoutSeconds', async () => {
    const { env } = await setup(() => ({ text: 'Too late.', delayMs: 5_000 }), {
      limits: { modelCallTimeoutSeconds: 0.3, timeoutSeconds: 60 },
      retry: { maxRetries: 0 },
    });
    const result = await cadreInProcess(['ask', '--json', 'Hello'], env);
    expect(result.code).not.toBe(0);
    expect(result.ms).toBeLessThan(3_000);
    const output = JSON.parse(result.stdout) as { status: string; answer: string };
    expect(output.status).toBe('timeout');
    expect(output.answer).toMatch(/model call took longer than its limit of 0\.3 s/);
  });

  it('rejects a bad limit in a definition file, naming the file and the field', async () => {
    const { env } = await setup(() => ({ text: 'Hi.' }));
    const file = join(env.CADRE_HOME, 'agents', 'bad.md');
    writeFileSync(file, '---\nname: bad\ndescription: x\nmaxOutputTokens: -5\n---\nBad.\n');
    const result = await cadreInProcess(['agents', 'check', file], env);
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toMatch(/bad\.md[\s\S]*maxOutputTokens/);
  });
});
