/**
 * `context: fork` in an agent file: the sub-agent starts from the main agent's whole conversation, its
 * tool calls and results included, not only from what was said. Through `cadre ask` (SQLite), or as jobs
 * on PostgreSQL with CADRE_TEST_MODE=postgres (the forked conversation travels with the child's job).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ChatRequest, contentText, startOpenAIServer } from '../fixtures/openai-server.ts';
import { fixtureModelEnv, runCli, tempHome } from '../helpers/cli.ts';
import { isMain } from '../web/web-app-setup.ts';

const CHECKER = `---
name: checker
description: Checks the main agent's working so far.
tools: [calculate]
context: fork
---
You are the checker sub-agent. Check the working in the conversation so far.
`;

/** The checker's requests: main's prefix (its system prompt too), then a brief with the checker's instructions. */
const isChecker = (body: ChatRequest) =>
  body.messages.some(
    (message) =>
      message.role === 'user' && contentText(message.content).includes('You are the checker sub-agent'),
  );

describe('context: fork', () => {
  it("gives a sub-agent the main agent's whole conversation, its tool calls and results too", async () => {
    const model = await startOpenAIServer(({ body, system }) => {
      const tools = body.messages.filter((message) => message.role === 'tool').length;
      if (isChecker(body)) {
        const seen = body.messages.map((message) => contentText(message.content)).join('\n');
        return { text: seen.includes('391') ? 'The product 391 is right.' : 'I see no working.' };
      }
      if (isMain(system)) {
        if (tools === 0) return { toolCalls: [{ name: 'calculate', arguments: { expression: '17 * 23' } }] };
        if (tools === 1)
          return { toolCalls: [{ name: 'checker', arguments: { task: 'Check the product above.' } }] };
        return { text: 'Checked: 391.' };
      }
      return { text: 'unexpected' };
    });
    try {
      const home = tempHome();
      mkdirSync(join(home, 'agents'), { recursive: true });
      writeFileSync(join(home, 'agents', 'checker.md'), CHECKER);
      const env = fixtureModelEnv(model, home);
      const result = await runCli(['ask', 'What is 17 * 23? Have it checked.', '--json'], env);
      expect(result.code).toBe(0);
      const printed = JSON.parse(result.stdout) as {
        answer: string;
        run: { children: Array<{ agent: string; summary: string }> };
      };
      expect(printed.answer).toBe('Checked: 391.');
      expect(printed.run.children.map((run) => [run.agent, run.summary])).toEqual([
        ['checker', 'The product 391 is right.'],
      ]);
      // The checker's request carried the person's question and main's calculate call and result.
      const checker = model.requests.find((request) => isChecker(request.body))!;
      const sent = JSON.stringify(checker.body.messages);
      expect(sent).toContain('What is 17 * 23? Have it checked.');
      expect(sent).toContain('calculate');
      expect(sent).toContain('Check the product above.');
    } finally {
      await model.close();
    }
  }, 90_000);
});
