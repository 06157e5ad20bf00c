import { Readable } from 'node:stream';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { captureStream } from '../helpers/capture.ts';
import { testModeDatabase } from '../helpers/cli.ts';
import { cadreInProcess, fixtureCadre } from '../helpers/cli-in-process.ts';

const ANSWER = [
  '# Lyon',
  '',
  'Lyon is **large** and *old*; see [the city](https://example.org/lyon).',
  '',
  '- first point',
  '- second point',
  '',
  '```js',
  'const people = 522250;',
  '```',
  '',
  '| city | people |',
  '|------|--------|',
  '| Lyon | 522250 |',
].join('\n');

/** `cadre ARGS` with stdout a terminal of 80 columns (stderr a pipe), `stdin` its input. */
async function onTerminal(args: string[], env: Record<string, string>, stdin?: string) {
  const stdout = captureStream({ tty: true, columns: 80 });
  const stderr = captureStream();
  const code = await main(args, {
    stdout: stdout.stream,
    stderr: stderr.stream,
    env: { ...testModeDatabase(env), ...env },
    cwd: process.cwd(),
    ...(stdin === undefined ? {} : { stdin: Readable.from([Buffer.from(stdin)]) }),
  });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

describe('an answer on a terminal', () => {
  it('has its Markdown drawn when stdout is a terminal, and is the text as written in a pipe or --json', async () => {
    const { env } = await fixtureCadre(() => ({ text: ANSWER }));
    const drawn = await onTerminal(['ask', 'Tell me about Lyon'], env);
    expect(drawn.code).toBe(0);
    // Colours (there are some whenever the terminal has them) are not what is tested here.
    const text = stripVTControlCharacters(drawn.stdout);
    expect(text).toContain('Lyon is large and old');
    expect(text).not.toContain('**');
    expect(text).not.toContain('```');
    expect(text).toContain('https://example.org/lyon');
    expect(text).not.toContain('[the city]');
    expect(text).toMatch(/\* first point/);
    expect(text).toContain('const people = 522250;');
    // The table is drawn with box lines, not pipes.
    expect(text).toMatch(/┌─+┬─+┐/);
    expect(text).not.toContain('|------|');

    const piped = await cadreInProcess(['ask', 'Tell me about Lyon'], env);
    expect(piped.stdout).toBe(`${ANSWER}\n`);
    const json = await onTerminal(['ask', '--json', 'Tell me about Lyon'], env);
    expect(JSON.parse(json.stdout).answer).toBe(ANSWER);
  });

  it('is drawn in chat too, and chat lists its sources as ask does', async () => {
    const { env } = await fixtureCadre(() => ({ text: ANSWER }));
    const chat = await onTerminal(['chat'], env, 'Tell me about Lyon\n');
    expect(chat.code).toBe(0);
    const text = stripVTControlCharacters(chat.stdout);
    expect(text).toContain('Lyon is large and old');
    expect(text).not.toContain('**');
    const ask = await cadreInProcess(['ask', 'Tell me about Lyon'], env);
    const listed = ask.stderr.slice(ask.stderr.indexOf('Sources'));
    expect(listed).toMatch(
      /^Sources \(1 unverified.*\n {2}\? unverified the city — https:\/\/example\.org\/lyon/,
    );
    expect(chat.stderr).toContain(listed.trimEnd());
  });
});
