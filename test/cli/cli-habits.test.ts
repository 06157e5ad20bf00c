import { describe, expect, it } from 'vitest';
import type { FlagSpec } from '../../src/cli/command-args.ts';
import { AGENTS } from '../../src/cli/commands/agents.ts';
import { ASK } from '../../src/cli/commands/ask.ts';
import { CHAT } from '../../src/cli/commands/chat.ts';
import { DOCS } from '../../src/cli/commands/docs.ts';
import { MCP } from '../../src/cli/commands/mcp.ts';
import { MIGRATE } from '../../src/cli/commands/migrate.ts';
import { QUEUE } from '../../src/cli/commands/queue.ts';
import { RUNS } from '../../src/cli/commands/runs.ts';
import { SERVE } from '../../src/cli/commands/serve.ts';
import { SESSIONS } from '../../src/cli/commands/sessions.ts';
import { USERS } from '../../src/cli/commands/users.ts';
import { WORKER } from '../../src/cli/commands/worker.ts';
import { WORKERS } from '../../src/cli/commands/workers.ts';
import { COMMANDS, main } from '../../src/cli/main.ts';
import type { CadreEvent } from '../../src/core/events.ts';
import type { RunTree } from '../../src/core/run-tree.ts';
import { contentText, type FixtureScript } from '../fixtures/openai-server.ts';
import { captureStream } from '../helpers/capture.ts';
import { tempHome } from '../helpers/cli.ts';
import { cadreInProcess, fixtureCadre } from '../helpers/cli-in-process.ts';

const isMain = (system: string) => system.includes('## When to delegate');
const SPECS: Record<string, { flags: Record<string, FlagSpec> }> = {
  ask: ASK,
  chat: CHAT,
  sessions: SESSIONS,
  agents: AGENTS,
  runs: RUNS,
  docs: DOCS,
  mcp: MCP,
  serve: SERVE,
  users: USERS,
  worker: WORKER,
  migrate: MIGRATE,
  workers: WORKERS,
  queue: QUEUE,
};

const setup = fixtureCadre;

const userWords = (body: { messages: Array<{ role: string; content?: unknown }> }) =>
  body.messages.filter((message) => message.role === 'user').map((message) => contentText(message.content));

describe('cadre COMMAND --help', () => {
  it('every command has help listing every flag it takes, and the top-level help lists every command', async () => {
    expect(Object.keys(SPECS).sort()).toEqual(Object.keys(COMMANDS).sort());
    // In process: eleven processes would take longer than the check itself.
    const cli = async (args: string[]) => {
      const stdout = captureStream();
      const code = await main(args, {
        stdout: stdout.stream,
        stderr: captureStream().stream,
        env: { CADRE_HOME: tempHome() },
      });
      return { code, stdout: stdout.text() };
    };
    const top = await cli(['--help']);
    for (const name of Object.keys(COMMANDS)) expect(top.stdout).toContain(`cadre ${name}`);
    // The runs lines name every runs command, and list's --running, not only cadre runs --help.
    const runsLines = top.stdout.slice(top.stdout.indexOf('cadre runs'), top.stdout.indexOf('cadre docs'));
    for (const words of [
      'list [--json] [--running]',
      'show ID',
      'stop ID',
      'say ID "TEXT"',
      'rm ID',
      'prune',
      'resume ID',
    ])
      expect(runsLines).toContain(words);
    for (const [name, spec] of Object.entries(SPECS)) {
      const help = await cli([name, '--help']);
      expect([name, help.code]).toEqual([name, 0]);
      expect(help.stdout).toMatch(new RegExp(`^cadre ${name}: usage:`));
      for (const flag of Object.keys(spec.flags)) expect(help.stdout).toContain(`--${flag}`);
    }
    // A wrong flag is named (the process entry point answers help too: test/e2e/cli-pipes.test.ts).
    const wrong = await cadreInProcess(['sessions', 'list', '--colour'], { CADRE_HOME: tempHome() });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/--colour/);
  });
});

describe('cadre runs stop and say name what is wrong', () => {
  it('an empty or too long message, an unknown run and a finished one each get their own reason', async () => {
    const { env } = await fixtureCadre(() => ({ text: 'done' }));
    const asked = JSON.parse((await cadreInProcess(['ask', '--json', 'hi'], env)).stdout);
    const root = asked.run.id as string;
    const empty = await cadreInProcess(['runs', 'say', root, '  '], env);
    expect([empty.code, empty.stderr.trim()]).toEqual([2, 'cadre: The message is empty.']);
    const long = await cadreInProcess(['runs', 'say', root, 'x'.repeat(20_001)], env);
    expect(long.code).toBe(2);
    expect(long.stderr).toContain('at most 20000 characters');
    const noText = await cadreInProcess(['runs', 'say', root], env);
    expect([noText.code, noText.stderr.trim()]).toEqual([2, 'cadre: usage: cadre runs say ID "TEXT"']);
    const unknown = await cadreInProcess(['runs', 'stop', 'run_nope'], env);
    expect([unknown.code, unknown.stderr.trim()]).toEqual([
      2,
      'cadre: There is no run "run_nope". See: cadre runs list',
    ]);
    const ended = await cadreInProcess(['runs', 'stop', root], env);
    expect([ended.code, ended.stderr.trim()]).toEqual([
      1,
      `cadre: run ${root} is not running (it ended ok).`,
    ]);
  });
});

describe('cadre ask habits', () => {
  const echo: FixtureScript = ({ body }) => ({ text: `heard: ${userWords(body).join(' | ')}` });

  it('reads the whole question from stdin with -, and refuses one far too long', async () => {
    const { server, env } = await setup(echo, { limits: { maxQuestionChars: 1_000 } });
    const whole = await cadreInProcess(['ask', '--json', '-'], env, undefined, 'What is in my notes?\n');
    expect(JSON.parse(whole.stdout).answer).toBe('heard: What is in my notes?');
    const asked = server.requests.length;
    const long = await cadreInProcess(['ask', '-'], env, undefined, 'x'.repeat(5_000));
    expect(long.code).toBe(2);
    expect(long.stderr).toMatch(/more than the limit of 1,000/);
    expect(server.requests.length).toBe(asked);
  });

  it('--max-turns, --budget and --timeout bound the answer', async () => {
    const { server, env } = await setup(({ body }) => {
      if (userWords(body).join(' ').includes('stall')) return { hang: true };
      return { toolCalls: [{ name: 'calculate', arguments: { expression: `${body.messages.length} + 1` } }] };
    });
    const turns = await cadreInProcess(['ask', '--json', '--max-turns', '2', 'count up'], env);
    expect(JSON.parse(turns.stdout).status).toBe('max_turns');
    expect(server.requests).toHaveLength(3);
    const budget = await cadreInProcess(['ask', '--json', '--budget', '50', 'count up'], env);
    expect(JSON.parse(budget.stdout).status).toBe('budget');
    const started = performance.now();
    const timeout = await cadreInProcess(['ask', '--json', '--timeout', '1', 'stall'], env);
    expect(JSON.parse(timeout.stdout).status).toBe('timeout');
    expect(timeout.code).toBe(1);
    expect(performance.now() - started).toBeLessThan(6_000);
    const bad = await cadreInProcess(['ask', '--max-turns', 'many', 'hi'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--max-turns many/);
  });

  it('lists sessions and continues the last one with -c', async () => {
    const { env } = await setup(echo);
    const first = JSON.parse((await cadreInProcess(['ask', '--json', 'My name is Ada.'], env)).stdout);
    const second = JSON.parse(
      (await cadreInProcess(['ask', '--json', '-c', 'What is my name?'], env)).stdout,
    );
    expect(second.sessionId).toBe(first.sessionId);
    expect(second.answer).toBe('heard: My name is Ada. | What is my name?');
    const listed = JSON.parse((await cadreInProcess(['sessions', 'list', '--json'], env)).stdout).sessions;
    expect(listed).toEqual([expect.objectContaining({ id: first.sessionId, title: 'My name is Ada.' })]);
    expect((await cadreInProcess(['sessions', 'list'], env)).stdout).toContain(first.sessionId);
    const chat = await cadreInProcess(['chat', '-c'], env, undefined, 'And now?\n');
    expect(chat.stdout).toContain('heard: My name is Ada. | What is my name? | And now?');
    expect((await cadreInProcess(['sessions', 'rm', first.sessionId], env)).code).toBe(0);
    expect((await cadreInProcess(['sessions', 'rm', first.sessionId], env)).code).toBe(2);
  });

  it('--events prints the event stream as JSON lines', async () => {
    const { env } = await setup(({ body, system }) => {
      if (isMain(system) && body.messages.at(-1)?.role === 'user')
        return { toolCalls: [{ name: 'math', arguments: { task: '2 + 2' } }] };
      return { text: 'four' };
    });
    const result = await cadreInProcess(['ask', '--events', 'What is 2 + 2?'], env);
    expect(result.code).toBe(0);
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as CadreEvent);
    expect(events[0]).toMatchObject({ type: 'run-start', agent: 'main', depth: 0 });
    expect(events.at(-1)).toMatchObject({ type: 'run-finish', agent: 'main', status: 'ok', summary: 'four' });
    expect(
      events.some((event) => event.type === 'run-start' && event.agent === 'math' && event.depth === 1),
    ).toBe(true);
    const tree = JSON.parse(
      (await cadreInProcess(['runs', 'show', events[0]!.runId, '--json'], env)).stdout,
    ) as RunTree;
    expect(tree.children[0]!.agent).toBe('math');
  });
});
