import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FINAL_ANSWER_PROMPT } from '../../src/core/limits.ts';
import type { RunTree } from '../../src/core/run-tree.ts';
import { contentText } from '../fixtures/openai-server.ts';
import { tempHome } from '../helpers/cli.ts';
import { cadreInProcess, fixtureCadre } from '../helpers/cli-in-process.ts';

const isMain = (system: string) => system.includes('## When to delegate');
const isMath = (system: string) => system.includes("Cadre's maths sub-agent");
const lastMessage = (body: { messages: Array<{ role: string; content?: unknown }> }) => body.messages.at(-1);

const setup = fixtureCadre;

function parseJson(stdout: string) {
  return JSON.parse(stdout) as {
    answer: string;
    status: string;
    sessionId: string;
    run: RunTree;
    usage: { inputTokens: number; outputTokens: number; totalTokens: number };
  };
}

describe('cadre ask against an OpenAI-compatible server', () => {
  it('delegates to a sub-agent that sees none of the parent conversation, and rolls up usage', async () => {
    const { server, env } = await setup(({ body, system }) => {
      const last = lastMessage(body);
      if (isMain(system)) {
        if (last?.role === 'user')
          return { toolCalls: [{ name: 'math', arguments: { task: 'Compute 17 * 23.' } }] };
        return { text: 'The product is 391.' };
      }
      if (isMath(system)) {
        if (last?.role === 'user')
          return { toolCalls: [{ name: 'calculate', arguments: { expression: '17 * 23' } }] };
        return { text: '17 * 23 = 391' };
      }
      return { status: 400 };
    });
    const result = await cadreInProcess(
      ['ask', '--json', 'My secret code is PINEAPPLE. What is 17 times 23?'],
      env,
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const output = parseJson(result.stdout);
    expect(output.status).toBe('ok');
    expect(output.answer).toBe('The product is 391.');
    expect(output.run.agent).toBe('main');
    expect(output.run.children).toHaveLength(1);
    const math = output.run.children[0]!;
    expect(math).toMatchObject({
      agent: 'math',
      task: 'Compute 17 * 23.',
      status: 'ok',
      summary: '17 * 23 = 391',
    });
    expect(math.toolCalls).toEqual([
      expect.objectContaining({ name: 'calculate', ok: true, input: { expression: '17 * 23' } }),
    ]);
    expect(output.run.toolCalls).toEqual([expect.objectContaining({ name: 'math', ok: true })]);
    // Usage: each run's own, and the root's subtree is the sum of all of them.
    expect(math.usage.totalTokens).toBeGreaterThan(0);
    expect(output.run.subtreeUsage.totalTokens).toBe(output.run.usage.totalTokens + math.usage.totalTokens);
    expect(output.usage).toEqual(output.run.subtreeUsage);
    // Isolation: no request to the math agent carried the person's words.
    const mathRequests = server.requests.filter((request) => isMath(request.system));
    expect(mathRequests).toHaveLength(2);
    for (const request of mathRequests)
      expect(JSON.stringify(request.body.messages)).not.toContain('PINEAPPLE');
    // The math agent was offered exactly its allow-list.
    const shownMath = JSON.parse(
      (await cadreInProcess(['agents', 'show', 'math', '--json'], env)).stdout,
    ) as {
      tools: Array<{ name: string; available: boolean }>;
    };
    const allowed = shownMath.tools.filter((tool) => tool.available).map((tool) => tool.name);
    expect(allowed).toContain('calculate');
    expect(mathRequests[0]!.body.tools?.map((tool) => tool.function.name).sort()).toEqual(allowed.sort());

    const shown = await cadreInProcess(['runs', 'show', output.run.id, '--json'], env);
    expect(JSON.parse(shown.stdout)).toEqual(output.run);
  });

  it('refuses calls to tools the agent was not given, and reports them back to the model', async () => {
    const { server, env } = await setup(({ body, system }) => {
      const last = lastMessage(body);
      if (isMain(system)) {
        if (last?.role === 'user')
          return { toolCalls: [{ name: 'math', arguments: { task: 'Add 2 and 2.' } }] };
        return { text: 'Done.' };
      }
      if (last?.role === 'user') {
        return {
          toolCalls: [
            { name: 'web_fetch', arguments: { url: 'http://169.254.169.254/' } },
            { name: 'constructor', arguments: {} },
            { name: 'calculate ', arguments: { expression: '2+2' } },
          ],
        };
      }
      return { text: '4' };
    });
    const result = await cadreInProcess(['ask', '--json', 'What is 2+2?'], env);
    expect(result.code).toBe(0);
    const math = parseJson(result.stdout).run.children[0]!;
    expect(math.toolCalls.map((call) => [call.name, call.ok, Boolean(call.refused)])).toEqual([
      ['web_fetch', false, true],
      ['constructor', false, true],
      ['calculate ', false, true],
    ]);
    const followUp = server.requests.filter((request) => isMath(request.system))[1]!;
    const toolMessages = followUp.body.messages.filter((message) => message.role === 'tool');
    expect(toolMessages).toHaveLength(3);
    for (const message of toolMessages)
      expect(contentText(message.content)).toMatch(/unavailable tool|not .*tool/i);
  });

  it('ends a runaway sub-agent as max_turns with a forced final answer', async () => {
    const { server, env } = await setup(({ body, system }) => {
      const last = lastMessage(body);
      if (isMain(system)) {
        if (last?.role === 'user')
          return { toolCalls: [{ name: 'math', arguments: { task: 'Loop forever.' } }] };
        return { text: 'The sub-agent ran out of turns.' };
      }
      if (last?.role === 'user' && contentText(last.content).includes(FINAL_ANSWER_PROMPT))
        return { text: 'Partial: 42' };
      return { toolCalls: [{ name: 'calculate', arguments: { expression: `${body.messages.length} + 1` } }] };
    });
    const result = await cadreInProcess(['ask', '--json', 'Keep calculating'], env);
    expect(result.code).toBe(0);
    const math = parseJson(result.stdout).run.children[0]!;
    expect(math.status).toBe('max_turns');
    expect(math.summary).toBe('Partial: 42');
    expect(math.toolCalls).toHaveLength(6);
    const mathRequests = server.requests.filter((request) => isMath(request.system));
    expect(mathRequests).toHaveLength(7);
    const final = mathRequests.at(-1)!.body;
    // Its history holds tool calls: the tools stay declared, and may not be called.
    expect(final.tools?.length).toBeGreaterThan(0);
    expect(final.tool_choice).toBe('none');
  });

  it('runs four sub-agents asked in one step at the same time', async () => {
    const { server, env } = await setup(({ body, system }) => {
      const last = lastMessage(body);
      if (isMain(system)) {
        if (last?.role === 'user') {
          return {
            toolCalls: [1, 2, 3, 4].map((n) => ({ name: 'math', arguments: { task: `Square ${n}.` } })),
          };
        }
        return { text: '1, 4, 9, 16' };
      }
      return { text: 'done', delayMs: 400 };
    });
    const result = await cadreInProcess(['ask', '--json', 'Square 1 to 4'], env);
    expect(result.code).toBe(0);
    const output = parseJson(result.stdout);
    expect(output.run.children.map((child) => child.status)).toEqual(['ok', 'ok', 'ok', 'ok']);
    const windows = server.requests.filter((request) => isMath(request.system));
    expect(windows).toHaveLength(4);
    const lastStart = Math.max(...windows.map((window) => window.receivedAt));
    const firstEnd = Math.min(...windows.map((window) => window.answeredAt!));
    expect(lastStart).toBeLessThan(firstEnd);
  });

  it('retries a 429 after the Retry-After wait', async () => {
    const { server, env } = await setup(({ index }) =>
      index === 0 ? { status: 429, headers: { 'retry-after': '1' } } : { text: 'Hello after waiting.' },
    );
    const result = await cadreInProcess(['ask', '--json', 'Hi'], env);
    expect(result.code).toBe(0);
    expect(parseJson(result.stdout).answer).toBe('Hello after waiting.');
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]!.receivedAt - server.requests[0]!.receivedAt).toBeGreaterThanOrEqual(950);
  });

  it('tells each retry as an event while it waits: attempt, of how many, and what the provider said', async () => {
    const { env } = await setup(({ index }) => (index < 2 ? { status: 503 } : { text: 'Back again.' }), {
      retry: { maxRetries: 3, baseDelayMs: 20 },
    });
    const result = await cadreInProcess(['ask', '--events', 'Hi'], env);
    expect(result.code).toBe(0);
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; [key: string]: unknown });
    const retries = events.filter((event) => event.type === 'model-retry');
    expect(retries).toEqual([
      expect.objectContaining({
        attempt: 2,
        maxAttempts: 4,
        agent: 'main',
        reason: expect.stringMatching(/503/),
      }),
      expect.objectContaining({ attempt: 3, maxAttempts: 4 }),
    ]);
    expect(retries[0]!.delayMs).toBeGreaterThan(0);
    // Told before the answer that followed them.
    expect(events.findIndex((event) => event.type === 'model-retry')).toBeLessThan(
      events.findIndex((event) => event.type === 'text-delta'),
    );
  });

  it('fails cleanly when the provider stays down', async () => {
    const { server, env } = await setup(() => ({ status: 503 }), {
      retry: { maxRetries: 2, baseDelayMs: 20 },
    });
    const result = await cadreInProcess(['ask', 'Hi'], env);
    expect(result.code).not.toBe(0);
    expect(server.requests).toHaveLength(3);
    expect(result.stderr).toMatch(/HTTP 503/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('does not retry a 401', async () => {
    const { server, env } = await setup(() => ({ status: 401 }));
    const result = await cadreInProcess(['ask', 'Hi'], env);
    expect(result.code).not.toBe(0);
    expect(server.requests).toHaveLength(1);
    expect(result.stderr).toMatch(/HTTP 401/);
  });

  it('hands malformed tool arguments back to the model as an error it can correct', async () => {
    const { server, env } = await setup(({ body, index }) => {
      if (index === 0) return { toolCalls: [{ name: 'calculate', arguments: '{"expression": "2+' }] };
      if (index === 1) return { toolCalls: [{ name: 'calculate', arguments: { expression: 2 } }] };
      if (index === 2) return { toolCalls: [{ name: 'calculate', arguments: { expression: '2+2' } }] };
      void body;
      return { text: '4' };
    });
    const result = await cadreInProcess(['ask', '--json', 'What is 2+2?'], env);
    expect(result.code).toBe(0);
    const run = parseJson(result.stdout).run;
    expect(run.toolCalls.map((call) => call.ok)).toEqual([false, false, true]);
    const secondToolMessage = server.requests[1]!.body.messages.find((message) => message.role === 'tool');
    expect(contentText(secondToolMessage?.content)).toMatch(/JSON|parse/i);
    const thirdToolMessage = server.requests[2]!.body.messages.filter(
      (message) => message.role === 'tool',
    ).at(-1);
    expect(contentText(thirdToolMessage?.content)).toMatch(/expression/);
  });

  it('prefetches a configured sub-agent when the trigger matches, and loads a Claude Code agent file', async () => {
    const { server, env } = await setup(
      ({ system }) => {
        if (isMath(system)) return { text: 'Prefetched: 2^10 = 1024.' };
        if (system.includes('You review diffs')) return { text: 'reviewed' };
        return { text: 'Main answer.' };
      },
      { delegation: { mode: 'prefetch', prefetch: { agent: 'math', trigger: '\\bpower\\b' } } },
    );
    const result = await cadreInProcess(['ask', '--json', 'What is 2 to the power 10?'], env);
    expect(result.code).toBe(0);
    const output = parseJson(result.stdout);
    expect(output.run.children.map((run) => run.agent)).toEqual(['math']);
    const mainRequest = server.requests.find((request) => isMain(request.system))!;
    expect(mainRequest.system).toContain(
      '## External knowledge\nRetrieved by the sub-agent `math` in 1 turn',
    );
    expect(mainRequest.system).toContain(
      '<untrusted-content source="sub-agent math" turns="1">\nPrefetched: 2^10 = 1024.\n</untrusted-content>',
    );

    const unrelated = await cadreInProcess(['ask', '--json', 'Say hello'], env);
    expect(parseJson(unrelated.stdout).run.children).toEqual([]);

    const cwd = tempHome();
    const agentDir = join(cwd, '.claude', 'agents');
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(
      join(agentDir, 'reviewer.md'),
      '---\nname: reviewer\ndescription: Reviews a diff\ntools: Read, Grep, Bash\nmodel: sonnet\n---\nYou review diffs.',
    );
    const listed = await cadreInProcess(['agents', 'list', '--json'], env, cwd);
    const reviewer = JSON.parse(listed.stdout).agents.find(
      (agent: { name: string }) => agent.name === 'reviewer',
    );
    expect(reviewer).toMatchObject({ source: 'claude' });
    expect(reviewer.notes.join(' ')).toMatch(/Bash/);
    const direct = await cadreInProcess(['ask', '--json', '--agent', 'reviewer', 'Review this'], env, cwd);
    expect(parseJson(direct.stdout)).toMatchObject({ status: 'ok', answer: 'reviewed' });
  });

  it('keeps a chat as a session: each answer sees the earlier turns, and ask --session continues it', async () => {
    const { server, env } = await setup(({ body }) => {
      const said = body.messages
        .filter((message) => message.role === 'user')
        .map((message) => contentText(message.content));
      return { text: `I have heard: ${said.join(' | ')}` };
    });
    const chat = await cadreInProcess(['chat'], env, undefined, 'My name is Ada.\nWhat is my name?\n');
    expect(chat.code).toBe(0);
    expect(chat.stdout).toContain('I have heard: My name is Ada. | What is my name?');
    const sessionId = chat.stderr.match(/session (ses_[\w-]+)/)?.[1];
    expect(sessionId).toBeTruthy();
    const more = await cadreInProcess(['ask', '--json', '--session', sessionId!, 'And now?'], env);
    expect(parseJson(more.stdout).answer).toBe('I have heard: My name is Ada. | What is my name? | And now?');
    expect(server.requests).toHaveLength(3);
  });

  it('confines the workspace tools to --workspace', async () => {
    const base = tempHome();
    const workspace = join(base, 'project');
    mkdirSync(workspace);
    writeFileSync(join(workspace, 'notes.txt'), 'inside the workspace');
    writeFileSync(join(base, 'secret.txt'), 'TOP SECRET CONTENT');
    const { server, env } = await setup(({ body, index }) => {
      if (index === 0) {
        return {
          toolCalls: [
            { name: 'read_file', arguments: { path: 'notes.txt' } },
            { name: 'read_file', arguments: { path: '../secret.txt' } },
            { name: 'read_file', arguments: { path: join(base, 'secret.txt') } },
          ],
        };
      }
      const results = body.messages
        .filter((message) => message.role === 'tool')
        .map((m) => contentText(m.content));
      return { text: JSON.stringify(results) };
    });
    const result = await cadreInProcess(
      ['ask', '--json', '--agent', 'explorer', '--workspace', workspace, 'Read the notes'],
      env,
    );
    const run = parseJson(result.stdout).run;
    expect(run.toolCalls.map((call) => call.ok)).toEqual([true, false, false]);
    const seen = JSON.stringify(server.requests[1]!.body.messages);
    expect(seen).toContain('inside the workspace');
    expect(seen).not.toContain('TOP SECRET CONTENT');
  });
});
