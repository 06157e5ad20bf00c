import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { contentText, type RecordedRequest, startOpenAIServer } from '../fixtures/openai-server.ts';
import { tempHome } from '../helpers/cli.ts';
import { cadreInProcess } from '../helpers/cli-in-process.ts';

/**
 * `context: fork` through the `cadre` command, embedded and (CADRE_TEST_MODE=postgres) with the child run as
 * a job another worker could take: its request travels as plain data, and its first model request begins
 * exactly as main's delegating request did.
 */

const isFork = (request: RecordedRequest) =>
  request.body.messages.some((message) => contentText(message.content).includes('You are now the sub-agent'));

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

describe('context: fork', () => {
  it("the forked child's first request is main's delegating request, then its brief", async () => {
    const server = await startOpenAIServer((request) => {
      const last = request.body.messages.at(-1);
      // The server reports the fork's prefix (main's whole request) as read from its cache.
      if (isFork(request))
        return {
          text: 'forked answer: the earlier note says 42',
          usage: {
            prompt_tokens: 3000,
            completion_tokens: 10,
            prompt_tokens_details: { cached_tokens: 2800 },
          },
        };
      if (last?.role === 'user')
        return { toolCalls: [{ name: 'sketch', arguments: { task: 'Look again.' } }] };
      return { text: 'Done.' };
    });
    close = server.close;
    const home = tempHome();
    mkdirSync(join(home, 'agents'));
    const file = join(home, 'agents', 'sketch.md');
    writeFileSync(
      file,
      '---\nname: sketch\ndescription: Looks again at the conversation so far.\ncontext: fork\n---\nYou are the sketch agent. Reply in one line.',
    );
    const price = { inputPerMillion: 3, outputPerMillion: 15, cachedInputPerMillion: 0.3 };
    writeFileSync(join(home, 'config.json'), JSON.stringify({ pricing: { 'compatible:m': price } }));
    const env = { CADRE_HOME: home, CADRE_MODEL: 'compatible:m', CADRE_COMPATIBLE_BASE_URL: server.baseURL };
    const checked = await cadreInProcess(['agents', 'check', file], env);
    expect([checked.code, checked.stdout]).toEqual([0, expect.not.stringContaining('error')]);

    const result = await cadreInProcess(['ask', '--json', 'What did the note say?'], env);
    expect(result.code).toBe(0);
    const forked = server.requests.filter(isFork);
    expect(forked).toHaveLength(1);
    const delegating = server.requests.find(
      (request) => request.body.messages.at(-1)?.role === 'user' && !isFork(request),
    )!;
    const child = forked[0]!.body;
    const parent = delegating.body;
    expect(child.messages.slice(0, parent.messages.length)).toEqual(parent.messages);
    expect(child.messages).toHaveLength(parent.messages.length + 1);
    expect(contentText(child.messages.at(-1)?.content)).toContain(
      'You are the sketch agent. Reply in one line.',
    );
    expect(contentText(child.messages.at(-1)?.content)).toContain('Look again.');
    expect(child.tools?.slice(0, parent.tools?.length)).toEqual(parent.tools);
    // Byte for byte: the fork's body is main's up to the end of main's messages, where the brief follows;
    // what comes after the messages (tools, tool choice, settings) is main's too.
    const raw = forked[0]!.raw;
    let same = 0;
    while (raw[same] === delegating.raw[same]) same++;
    expect(delegating.raw.slice(same)).toMatch(/^\],"/);
    expect(raw.slice(same)).toMatch(/^,\{"role":"user","content":"You are now the sub-agent/);
    const { messages: _, ...afterParent } = JSON.parse(delegating.raw) as Record<string, unknown>;
    const { messages: __, ...afterFork } = JSON.parse(raw) as Record<string, unknown>;
    expect(JSON.stringify(afterFork)).toBe(JSON.stringify(afterParent));

    const output = JSON.parse(result.stdout) as {
      run: { children: Array<{ agent: string; summary: string; cost: { amount: number } }> };
    };
    expect(output.run.children).toMatchObject([
      {
        agent: 'sketch',
        forked: true,
        summary: 'forked answer: the earlier note says 42',
        usage: { inputTokens: 3000, cacheReadTokens: 2800, outputTokens: 10 },
      },
    ]);
    // The cached part of its input is billed at the cached price.
    expect(output.run.children[0]!.cost.amount).toBeCloseTo((200 * 3 + 2800 * 0.3 + 10 * 15) / 1e6, 10);

    const wrong = join(home, 'wrong.md');
    writeFileSync(wrong, '---\nname: wrong\ndescription: d\ncontext: whole\n---\nYou help.\n');
    const refused = await cadreInProcess(['agents', 'check', wrong], env);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('"fork"');
  });
});
