/**
 * `cadre chat` and `cadre ask` with a background sub-agent: the answer goes on with the sub-agent's result
 * in a new turn the main agent answers, stderr says when that result arrived, and the prompt (or the exit)
 * comes after it. `limits.maxBackground` bounds how many run in the background at once.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isScout, SCOUT } from '../fixtures/background-agent.ts';
import { contentText, type FixtureScript } from '../fixtures/openai-server.ts';
import { cadreInProcess, fixtureCadre } from '../helpers/cli-in-process.ts';
import { isMain } from '../web/web-app-setup.ts';

/** Main sends scout (`calls` times in one step) and answers; scout answers once main has answered. */
function script(calls = 1): FixtureScript {
  let mainAnswered: () => void = () => {};
  const answered = new Promise<void>((resolve) => {
    mainAnswered = resolve;
  });
  return ({ body, system }) => {
    const last = body.messages.at(-1);
    const said = contentText(last?.content);
    if (isMain(system)) {
      if (last?.role === 'user' && !said.includes('has finished'))
        return {
          toolCalls: Array.from({ length: calls }, (_, index) => ({
            name: 'scout',
            arguments: { task: `Find answer ${index + 1}.` },
          })),
        };
      if (last?.role === 'tool') {
        mainAnswered();
        return { text: 'Scout is on it.' };
      }
      return { text: said.includes('Found 42') ? 'Scout found 42.' : 'unexpected' };
    }
    if (isScout(system)) return { text: 'Found 42', until: answered };
    return { text: 'unexpected' };
  };
}

function withScout(home: string) {
  mkdirSync(join(home, 'agents'), { recursive: true });
  writeFileSync(join(home, 'agents', 'scout.md'), SCOUT);
}

describe('background sub-agents in the terminal', () => {
  it('cadre chat shows the new turn with the background result before the next prompt', async () => {
    const { env, home } = await fixtureCadre(script());
    withScout(home);
    const chat = await cadreInProcess(['chat'], env, undefined, 'What is the answer?\n');
    expect(chat.code).toBe(0);
    expect(chat.stdout).toContain('Scout is on it.\n\nScout found 42.');
    expect(chat.stderr).toMatch(
      /scout \(run_\w+\) finished in the background \(ok\); the main agent goes on/,
    );
  });

  it('past limits.maxBackground a background delegation runs in the foreground', async () => {
    const { env, home, server } = await fixtureCadre(
      ({ body, system }) => {
        const last = body.messages.at(-1);
        if (isMain(system)) {
          if (last?.role === 'user' && !contentText(last.content).includes('has finished'))
            return {
              toolCalls: [
                { name: 'scout', arguments: { task: 'Find answer 1.' } },
                { name: 'scout', arguments: { task: 'Find answer 2.' } },
              ],
            };
          return { text: 'Done.' };
        }
        return { text: 'Found 42' };
      },
      { limits: { maxBackground: 1 } },
    );
    withScout(home);
    const asked = await cadreInProcess(['ask', '--json', 'What is the answer?'], env);
    expect(asked.code).toBe(0);
    const printed = JSON.parse(asked.stdout) as { run: { children: Array<{ background?: boolean }> } };
    expect(printed.run.children.map((child) => child.background ?? false).sort()).toEqual([false, true]);
    // The foreground one's envelope came back in the tool result itself.
    const followUp = server.requests.find(
      (request) => isMain(request.system) && request.body.messages.some((message) => message.role === 'tool'),
    );
    const results = followUp!.body.messages.filter((message) => message.role === 'tool');
    expect(results.map((message) => JSON.parse(contentText(message.content)).status).sort()).toEqual([
      'ok',
      'running',
    ]);
  });

  it('a main agent out of turns stops its background run and cadre ask ends at once, saying why', async () => {
    const { env, home } = await fixtureCadre(({ body, system }) => {
      if (isMain(system)) {
        // Its one turn delegates; then it is asked for its answer without tools.
        if (!body.messages.some((message) => message.role === 'tool'))
          return { toolCalls: [{ name: 'scout', arguments: { task: 'Find the answer.' } }] };
        return { text: 'I ran out of turns; scout was still looking.' };
      }
      // Scout would look for a minute: only being stopped ends it sooner.
      return { text: 'Found 42', delayMs: 60_000 };
    });
    withScout(home);
    const started = Date.now();
    const asked = await cadreInProcess(['ask', '--json', '--max-turns', '1', 'What is the answer?'], env);
    expect(Date.now() - started).toBeLessThan(30_000);
    const printed = JSON.parse(asked.stdout) as {
      status: string;
      run: { children: Array<{ agent: string; status: string; summary: string; background?: boolean }> };
    };
    expect(printed.status).toBe('max_turns');
    expect(printed.run.children).toMatchObject([{ agent: 'scout', status: 'cancelled', background: true }]);
    // As jobs too (CADRE_TEST_MODE=postgres): the stop reaches the worker running scout with its reason.
    expect(printed.run.children[0]!.summary).toContain(
      'Stopped: the main agent ended (max_turns) and cannot take its result.',
    );
  }, 45_000);
});
