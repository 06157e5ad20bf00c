import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { contentText } from '../fixtures/openai-server.ts';
import { captureStream } from '../helpers/capture.ts';
import { tempHome } from '../helpers/cli.ts';
import { cadreInProcess, fixtureCadre } from '../helpers/cli-in-process.ts';

// What a hurried or careless person does at the command line, and what they should get back: a clear
// message naming what was wrong, the documented exit code, and nothing already stored lost.

const lastUserText = (request: { body: { messages: Array<{ role: string; content?: unknown }> } }) =>
  contentText(request.body.messages.filter((message) => message.role === 'user').at(-1)?.content);

/** `cadre ARGS` in process with `stdin` as its standard input. */
async function withStdin(args: string[], env: Record<string, string>, stdin: Readable) {
  const stdout = captureStream();
  const stderr = captureStream();
  const code = await main(args, { stdout: stdout.stream, stderr: stderr.stream, env, stdin });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

describe('questions piped in', () => {
  it('keeps a character whose bytes a pipe delivers in two chunks whole', async () => {
    const { server, env } = await fixtureCadre(() => ({ text: 'ok' }));
    const text = '日本語のメモ'.repeat(4);
    const bytes = Buffer.from(text);
    // Split inside the first 日 (3 bytes), as a pipe does at its 64 KB boundaries.
    const chunks = [bytes.subarray(0, 1), bytes.subarray(1, 2), bytes.subarray(2, 7), bytes.subarray(7)];
    const result = await withStdin(['ask', '-'], env, Readable.from(chunks));
    expect(result.code).toBe(0);
    expect(lastUserText(server.requests[0]!)).toBe(text);
  });
});

describe('cadre chat', () => {
  it('refuses a line past limits.maxQuestionChars before any model call, and goes on', async () => {
    const { server, env } = await fixtureCadre(() => ({ text: 'short answer' }), {
      limits: { maxQuestionChars: 50 },
    });
    const result = await cadreInProcess(['chat'], env, undefined, `${'x'.repeat(51)}\nhello\n`);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/51 characters, more than the limit of 50/);
    expect(server.requests.map(lastUserText)).toEqual(['hello']);
    expect(result.stdout).toContain('short answer');
  });

  it('keeps no empty session when left before anything was asked', async () => {
    const { env } = await fixtureCadre(() => ({ text: 'never' }));
    const result = await cadreInProcess(['chat'], env, undefined, '\n  \n');
    expect(result.code).toBe(0);
    expect(result.stderr).not.toMatch(/Session saved/);
    expect(result.stderr).toMatch(/no session kept/);
    const list = await cadreInProcess(['sessions', 'list', '--json'], env);
    expect(JSON.parse(list.stdout).sessions).toEqual([]);
  });
});

describe('CADRE_HOME that is not a folder', () => {
  it('names the setting and the path, exit 2, for a file or a path through a file', async () => {
    const file = join(tempHome(), 'config.json');
    writeFileSync(file, '{}');
    for (const home of [file, join(file, 'cadre')]) {
      const result = await cadreInProcess(['sessions', 'list'], { CADRE_HOME: home });
      expect([home, result.code]).toEqual([home, 2]);
      expect(result.stderr).toContain(`Cadre's home folder ${home}`);
      expect(result.stderr).toContain('CADRE_HOME');
      expect(result.stderr).not.toMatch(/EEXIST|ENOTDIR/);
    }
  });
});

describe('cadre docs search --type', () => {
  it('takes the type as its help writes it (md), as well as its stored name', async () => {
    const home = tempHome();
    const env = { CADRE_HOME: home };
    writeFileSync(join(home, 'notes.md'), '# Notes\n\nThe heron nests by the river.\n');
    expect((await cadreInProcess(['docs', 'add', join(home, 'notes.md')], env)).code).toBe(0);
    for (const type of ['md', 'markdown']) {
      const found = await cadreInProcess(['docs', 'search', 'heron', '--type', type], env);
      expect([type, found.code, found.stdout]).toEqual([type, 0, expect.stringContaining('heron')]);
    }
    const wrong = await cadreInProcess(['docs', 'search', 'heron', '--type', 'doc'], env);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/^cadre docs search: --type "doc" is not one of/);
  });
});

describe('cadre agents check', () => {
  it('reports a model whose provider no run could use, naming the file and the field', async () => {
    const home = tempHome();
    const file = join(home, 'typo.md');
    writeFileSync(file, '---\nname: typo\ndescription: d\nmodel: opnai:gpt-5-mini\n---\nYou help.\n');
    const result = await cadreInProcess(['agents', 'check', file], { CADRE_HOME: home });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^error .*typo\.md: model: Unknown model provider "opnai"/m);
  });

  it('points at the line of the file a YAML error is on, and names a folder or a missing file plainly', async () => {
    const home = tempHome();
    const file = join(home, 'broken.md');
    writeFileSync(file, '---\nname: broken\ndescription: [unclosed\n---\nYou help.\n');
    const result = await cadreInProcess(['agents', 'check', file, home, join(home, 'gone.md')], {
      CADRE_HOME: home,
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`error ${file}: front matter is not valid YAML: `);
    expect(result.stdout).toMatch(/at line 3, column \d+\n/);
    expect(result.stdout).toContain(
      `error ${home}: a folder, not a definition file; name the .md files in it`,
    );
    expect(result.stdout).toContain(`error ${join(home, 'gone.md')}: no such file\n`);
  });
});

describe('cadre runs prune --older-than', () => {
  it('refuses a duration reaching back before 1970 as the person’s input, not a crash', async () => {
    const env = { CADRE_HOME: tempHome() };
    for (const age of ['999999d', '99999999999999999999d']) {
      const result = await cadreInProcess(['runs', 'prune', '--older-than', age], env);
      expect([age, result.code]).toEqual([age, 2]);
      expect(result.stderr).toContain(`--older-than ${age}: that reaches back before 1970`);
    }
  });
});

describe('removing several things at once', () => {
  it('runs rm and sessions rm remove every id they can and name the ones they cannot (exit 2)', async () => {
    const { env } = await fixtureCadre(() => ({ text: 'answer' }));
    for (const question of ['one', 'two'])
      expect((await cadreInProcess(['ask', question], env)).code).toBe(0);
    const runs = JSON.parse((await cadreInProcess(['runs', 'list', '--json'], env)).stdout).runs;
    const sessions = JSON.parse((await cadreInProcess(['sessions', 'list', '--json'], env)).stdout).sessions;

    const runsRm = await cadreInProcess(['runs', 'rm', runs[0].id, 'run_typo', runs[1].id], env);
    expect(runsRm.code).toBe(2);
    expect(runsRm.stderr).toContain('There is no run "run_typo"');
    expect(JSON.parse((await cadreInProcess(['runs', 'list', '--json'], env)).stdout).runs).toEqual([]);

    const sessionsRm = await cadreInProcess(
      ['sessions', 'rm', sessions[0].id, 'ses_typo', sessions[1].id],
      env,
    );
    expect(sessionsRm.code).toBe(2);
    expect(sessionsRm.stderr).toContain('There is no session "ses_typo"');
    expect(JSON.parse((await cadreInProcess(['sessions', 'list', '--json'], env)).stdout).sessions).toEqual(
      [],
    );
  });
});

describe('cadre serve on an address it cannot have', () => {
  it('names a busy port and a foreign host as the person’s choice (exit 2), and refuses --port 1e3', async () => {
    const { server } = await fixtureCadre(() => ({ text: 'unused' }));
    const busy = new URL(server.baseURL).port;
    const env = { CADRE_HOME: tempHome() };
    const inUse = await cadreInProcess(['serve', '--port', busy], env);
    expect(inUse.code).toBe(2);
    expect(inUse.stderr).toContain(`127.0.0.1:${busy} is already in use`);
    expect(inUse.stderr).not.toMatch(/EADDRINUSE/);
    const foreign = await cadreInProcess(['serve', '--host', '192.0.2.1', '--port', '0'], {
      ...env,
      CADRE_TOKEN: 'a-token-so-any-host-is-allowed',
    });
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toContain('--host 192.0.2.1: not an address of this machine');
    const wrong = await cadreInProcess(['serve', '--port', '1e3'], env);
    expect([wrong.code, wrong.stderr]).toEqual([2, expect.stringContaining('--port 1e3: expected a port')]);
  });
});

describe('cadre users add of a name it refuses', () => {
  it('shows the name escaped and cut, on one line, not a pasted 10 KB back or a raw escape sequence', async () => {
    const env = { CADRE_HOME: tempHome() };
    const huge = await cadreInProcess(['users', 'add', 'x'.repeat(10_000)], env);
    expect(huge.code).toBe(2);
    expect(huge.stderr.length).toBeLessThan(300);
    expect(huge.stderr).toContain(`"${'x'.repeat(64)}…" is not a usable user name`);
    const odd = await cadreInProcess(['users', 'add', 'a\nb\x1b]0;title\x07'], env);
    expect(odd.code).toBe(2);
    expect(odd.stderr).toBe(
      'cadre: "a\\nb\\u001b]0;title\\u0007" is not a usable user name: use ASCII letters, digits, ".", "_" or "-" (up to 64).\n',
    );
    expect((await cadreInProcess(['users', 'list'], env)).stdout).not.toMatch(/x{64}/);
  });
});

describe('a stranger’s repository at the terminal', () => {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  const ESC = /[\x1b\x07\x9b]/;

  it('shows its agent files, .mcp.json and tasks without obeying the control sequences in them', async () => {
    const { env } = await fixtureCadre(() => ({ text: 'fine' }));
    const project = tempHome();
    mkdirSync(join(project, '.cadre', 'agents'), { recursive: true });
    writeFileSync(
      join(project, '.cadre', 'agents', 'evil.md'),
      '---\nname: evil\ndescription: "hi \\e]52;c;cm0gLXJmIH4=\\a there"\ntools: []\n---\nbody \x1b[2J here\n',
    );
    writeFileSync(
      join(project, '.mcp.json'),
      JSON.stringify({
        mcpServers: { 'ok\x1b]0;PWN\x07': { command: 'sh', args: ['-c', 'x \x1b[2K\x1b[1Gy'] } },
      }),
    );
    const runs = [
      ['mcp', 'list'],
      ['ask', 'title \x1b]0;PWN\x07 here'],
      ['agents', 'list'],
      ['agents', 'show', 'evil'],
      ['runs', 'list'],
    ];
    for (const args of runs) {
      const result = await cadreInProcess(args, env, project);
      expect([args[0], args[1], result.code]).toEqual([args[0], args[1], 0]);
      expect([args[1], result.stdout + result.stderr]).toEqual([args[1], expect.not.stringMatching(ESC)]);
    }
    const shown = await cadreInProcess(['agents', 'show', 'evil'], env, project);
    expect(shown.stdout).toMatch(/^evil\nhi there\n/);
    expect(shown.stdout).toContain('body  here');
  });

  it('mcp trust refuses a folder whose .mcp.json does not validate, and untrust needs no valid file', async () => {
    const env = { CADRE_HOME: tempHome() };
    const project = tempHome();
    const mcpJson = join(project, '.mcp.json');
    writeFileSync(mcpJson, JSON.stringify({ mcpServers: { 'no spaces allowed': { command: 'true' } } }));
    const refused = await cadreInProcess(['mcp', 'trust'], env, project);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`${project} was not trusted: ${mcpJson}: mcpServers.no spaces allowed:`);
    expect((await cadreInProcess(['sessions', 'list'], env, project)).code).toBe(0);
    // Trusted while valid, then changed into something that does not validate: still untrustable.
    writeFileSync(mcpJson, JSON.stringify({ mcpServers: { tools: { command: 'true' } } }));
    expect((await cadreInProcess(['mcp', 'trust'], env, project)).code).toBe(0);
    writeFileSync(mcpJson, JSON.stringify({ mcpServers: { tools: { command: 'true', bogus: 1 } } }));
    const untrusted = await cadreInProcess(['mcp', 'untrust'], env, project);
    expect([untrusted.code, untrusted.stdout]).toEqual([0, `No longer trusted: ${project}\n`]);
  });
});

describe('list --limit past what a number can hold', () => {
  it('is the person’s input (exit 2), not a database "datatype mismatch" (exit 3)', async () => {
    const env = { CADRE_HOME: tempHome() };
    for (const command of ['runs', 'sessions']) {
      const result = await cadreInProcess([command, 'list', '--limit', '99999999999999999999'], env);
      expect([command, result.code, result.stderr]).toEqual([
        command,
        2,
        expect.stringContaining('--limit 99999999999999999999: expected a'),
      ]);
    }
  });
});

describe('a flag given an empty value', () => {
  it('is refused by name (exit 2) instead of meaning no flag: --session "$UNSET" does not start a new session', async () => {
    const { server, env } = await fixtureCadre(() => ({ text: 'answer' }));
    for (const args of [
      ['ask', '--session', '', 'hi'],
      ['ask', '--model', ' ', 'hi'],
      ['chat', '--session', ''],
      ['serve', '--port', ''],
      ['runs', 'prune', '--older-than', ''],
    ]) {
      const result = await cadreInProcess(args, env);
      const flag = args.find((arg) => arg.startsWith('--'));
      expect([args.join(' '), result.code, result.stderr]).toEqual([
        args.join(' '),
        2,
        `cadre: ${flag} was given an empty value (an unset shell variable?)\n`,
      ]);
    }
    expect(server.requests).toHaveLength(0);
    expect(JSON.parse((await cadreInProcess(['sessions', 'list', '--json'], env)).stdout).sessions).toEqual(
      [],
    );
  });
});
