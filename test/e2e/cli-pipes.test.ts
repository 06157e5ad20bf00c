import { describe, expect, it } from 'vitest';
import { contentText } from '../fixtures/openai-server.ts';
import { runCli, tempHome } from '../helpers/cli.ts';
import { fixtureCadre } from '../helpers/cli-in-process.ts';

/** What a real `cadre` process does with its own stdin, stdout and arguments; the use cases run in test/cli. */
const userWords = (body: { messages: Array<{ role: string; content?: unknown }> }) =>
  body.messages.filter((message) => message.role === 'user').map((message) => contentText(message.content));

describe('cadre writing into a pipe that closes', () => {
  it('exits quietly when the reader goes away (cadre … | head)', async () => {
    const env = { CADRE_HOME: tempHome() };
    for (const args of [['agents', 'show', 'planner'], ['agents', 'list'], ['--help']]) {
      // The reading end is closed before cadre writes anything, so every write meets EPIPE.
      const result = await runCli(args, env, { onSpawn: (child) => child.stdout?.destroy() });
      expect(result.stderr).not.toMatch(/EPIPE|\n\s+at /);
      expect(result.code).toBe(0);
    }
  });
});

describe('cadre ask reading a pipe', { timeout: 60_000 }, () => {
  const echo = ({ body }: { body: { messages: Array<{ role: string; content?: unknown }> } }) => ({
    text: `heard: ${userWords(body).join(' | ')}`,
  });

  it('joins a piped file to the question, and refuses piped input far too long', async () => {
    const { server, env } = await fixtureCadre(echo, { limits: { maxQuestionChars: 1_000 } });
    const joined = await runCli(['ask', '--json', 'summarise'], env, { stdin: 'Notes: buy milk.\n' });
    expect(JSON.parse(joined.stdout).answer).toBe('heard: summarise\n\nNotes: buy milk.');
    const asked = server.requests.length;
    const long = await runCli(['ask', 'summarise'], env, { stdin: 'x'.repeat(5_000) });
    expect(long.code).toBe(2);
    expect(long.stderr).toMatch(/more than the limit of 1,000/);
    expect(server.requests.length).toBe(asked);
  });

  it('refuses 5 MB by default before any model call', async () => {
    const { server, env } = await fixtureCadre(echo);
    const result = await runCli(['ask', 'summarise'], env, { stdin: 'word '.repeat(1_000_000) });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/limit of 2,000,000/);
    expect(server.requests).toHaveLength(0);
  });
});

describe('the cadre process entry point', { timeout: 60_000 }, () => {
  it('answers help and names a wrong flag', async () => {
    const spawned = await runCli(['runs', 'prune', '--help'], { CADRE_HOME: tempHome() });
    expect(spawned.stdout).toContain('--older-than');
    const wrong = await runCli(['sessions', 'list', '--colour'], { CADRE_HOME: tempHome() });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/--colour/);
  });
});
