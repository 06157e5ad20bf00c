import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunTree } from '../../src/core/run-tree.ts';
import type { FixtureScript } from '../fixtures/openai-server.ts';
import { cadreInProcess, fixtureCadre } from '../helpers/cli-in-process.ts';

/** `cadre ask --json --agent math` in this process (main, as the bin calls it) against a fixture server. */
async function askInProcess(script: FixtureScript, config?: object) {
  const { server, env, home } = await fixtureCadre(script, config);
  const result = await cadreInProcess(['ask', '--json', '--agent', 'math', 'Do the maths.'], env, home);
  return {
    ...result,
    server,
    home,
    json: () => JSON.parse(result.stdout) as { status: string; run: RunTree },
  };
}

const requestBytes = (request: { body: unknown }) => JSON.stringify(request.body).length;

describe('hostile model output through the CLI', () => {
  it('refuses a 10 MB argument without echoing it back or storing it', async () => {
    const huge = 'x'.repeat(10 * 1024 * 1024);
    const result = await askInProcess(({ index }) =>
      index === 0
        ? { toolCalls: [{ name: 'calculate', arguments: { expression: huge } }] }
        : { text: 'The argument was too long.' },
    );
    expect(result.code).toBe(0);
    const next = result.server.requests[1]!;
    expect(requestBytes(next)).toBeLessThan(100_000);
    expect(JSON.stringify(next.body.messages.at(-1))).toMatch(
      /more than the limit of 300,000; send shorter arguments/,
    );
    expect(result.json().run.toolCalls[0]).toMatchObject({ ok: false });
    const stored = ['cadre.db', 'cadre.db-wal']
      .map((name) => join(result.home, name))
      .reduce((total, path) => total + (existsSync(path) ? statSync(path).size : 0), 0);
    expect(stored).toBeLessThan(2_000_000);
  });

  it('refuses arguments nested 10,000 levels deep and still prints its JSON', async () => {
    const deep = `{"expression":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
    const result = await askInProcess(({ index }) =>
      index === 0 ? { toolCalls: [{ name: 'calculate', arguments: deep }] } : { text: 'Too deep.' },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.json().status).toBe('ok');
    expect(JSON.stringify(result.server.requests[1]!.body.messages.at(-1))).toMatch(
      /more than 64 levels deep/,
    );
  });

  it('runs at most maxToolCallsPerStep calls of one step and refuses the rest in one note, not one each', async () => {
    const calls = Array.from({ length: 5000 }, (_, index) => ({
      name: 'calculate',
      arguments: { expression: `${index} + 1` },
    }));
    const result = await askInProcess(
      ({ index }) => (index === 0 ? { toolCalls: calls } : { text: 'Done.' }),
      {
        limits: { maxToolCallsPerStep: 10 },
      },
    );
    expect(result.code).toBe(0);
    const toolCalls = result.json().run.toolCalls;
    // 10 run and one refusal stands for the 4,990 others (they were 4,990 refusal messages).
    expect(toolCalls).toHaveLength(11);
    expect(toolCalls.filter((call) => call.ok)).toHaveLength(10);
    const next = JSON.stringify(result.server.requests[1]!.body.messages);
    expect(next).toMatch(
      /at most 10 tool calls per step, and this response asked for 5000; the 4990 past the limit were not run/,
    );
    expect(next.length).toBeLessThan(20_000);
  });

  it('a calculate call that would exhaust memory is a tool error; the run goes on and finishes', async () => {
    const result = await askInProcess(({ index }) =>
      index === 0
        ? { toolCalls: [{ name: 'calculate', arguments: { expression: 'size(zeros(32000,32000))' } }] }
        : { text: 'That matrix is too large to compute.' },
    );
    const { server, json } = result;
    expect(result.code).toBe(0);
    expect(json().status).toBe('ok');
    expect(json().run.toolCalls.map((call) => call.ok)).toEqual([false]);
    const seen = JSON.stringify(server.requests[1]!.body.messages.at(-1));
    // Under load the 5 s time cap can trip before the heap cap; both are bounded, named tool errors.
    expect(seen).toMatch(
      /needs more than the calculator's 256 MB of memory and was stopped|took longer than the calculator's limit/,
    );
  });
});
