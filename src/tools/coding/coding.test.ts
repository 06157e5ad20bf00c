import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testToolContext, toolCaller } from '../../core/test-tool-context.ts';
import { codingTools, isSecretName } from './index.ts';

let base: string;
let root: string;
let call: ReturnType<typeof toolCaller>;

beforeAll(() => {
  base = mkdtempSync(path.join(tmpdir(), 'cadre-coding-'));
  root = path.join(base, 'ws');
  mkdirSync(path.join(root, 'src'), { recursive: true });
  mkdirSync(path.join(base, 'ws-other'));
  writeFileSync(path.join(base, 'outside.txt'), 'OUTSIDE');
  writeFileSync(path.join(root, 'src', 'main.ts'), 'const a = 1;\nconst b = 2;\nconst c = a + b;\n');
  writeFileSync(path.join(root, 'twice.txt'), 'x = 1\nx = 1\n');
  symlinkSync(path.join(base, 'outside.txt'), path.join(root, 'link-out.txt'));
  symlinkSync(path.join(base, 'ws-other'), path.join(root, 'dir-out'));
  symlinkSync(path.join(base, 'missing-target.txt'), path.join(root, 'dangling.txt'));
  symlinkSync(path.join(root, 'src', 'main.ts'), path.join(root, 'link-in.ts'));
  const env = {
    PATH: process.env.PATH,
    HOME: base,
    OPENAI_API_KEY: 'sk-secret-openai',
    CADRE_TOKEN: 'cadre-secret',
    GITHUB_TOKEN: 'gh-secret',
    MY_VISIBLE: 'visible',
  };
  call = toolCaller(codingTools({ workspace: root, env }), testToolContext({ agent: 'main' }));
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('write_file', () => {
  it('creates a file and its folders, and the result carries the diff', async () => {
    const result = await call('write_file', { path: 'new/deep/hello.ts', content: 'export const x = 1;\n' });
    expect(result).toMatchObject({ path: 'new/deep/hello.ts', created: true, added: 1, removed: 0 });
    expect(result.diff).toContain('+++ b/new/deep/hello.ts');
    expect(result.diff).toContain('+export const x = 1;');
    expect(readFileSync(path.join(root, 'new/deep/hello.ts'), 'utf8')).toBe('export const x = 1;\n');
  });

  it('replaces an existing file and shows what changed', async () => {
    writeFileSync(path.join(root, 'replace.txt'), 'one\ntwo\n');
    const result = await call('write_file', { path: 'replace.txt', content: 'one\nthree\n' });
    expect(result).toMatchObject({ created: false, added: 1, removed: 1 });
    expect(result.diff).toContain('-two');
    expect(result.diff).toContain('+three');
  });

  const refused: Array<[string, string]> = [
    ['parent traversal', '../escaped.txt'],
    ['traversal in the middle', 'src/../../escaped.txt'],
    ['an absolute path', path.join(base ?? '/tmp', 'escaped.txt')],
    ['an absolute system path', '/tmp/cadre-escaped.txt'],
    ['a symlink to a file outside', 'link-out.txt'],
    ['a file under a symlinked folder outside', 'dir-out/escaped.txt'],
    ['a new folder under a symlinked folder outside', 'dir-out/a/b/escaped.txt'],
    ['a dangling symlink', 'dangling.txt'],
    ['a home-relative path', '~/escaped.txt'],
  ];
  it.each(refused)('refuses %s', async (_label, requested) => {
    await expect(call('write_file', { path: requested, content: 'PWNED' })).rejects.toThrow(
      /outside the workspace|absolute|symbolic link/,
    );
    expect(readFileSync(path.join(base, 'outside.txt'), 'utf8')).toBe('OUTSIDE');
    expect(existsSync(path.join(base, 'escaped.txt'))).toBe(false);
    expect(existsSync(path.join(base, 'ws-other', 'escaped.txt'))).toBe(false);
    expect(existsSync(path.join(base, 'ws-other', 'a'))).toBe(false);
    expect(existsSync(path.join(base, 'missing-target.txt'))).toBe(false);
  });

  it('writes through a symlink whose target is inside the workspace', async () => {
    writeFileSync(path.join(root, 'src', 'linked.ts'), 'old\n');
    symlinkSync(path.join(root, 'src', 'linked.ts'), path.join(root, 'to-linked.ts'));
    const result = await call('write_file', { path: 'to-linked.ts', content: 'new\n' });
    expect(result.path).toBe('src/linked.ts');
    expect(readFileSync(path.join(root, 'src', 'linked.ts'), 'utf8')).toBe('new\n');
  });

  it('refuses to write over a folder', async () => {
    await expect(call('write_file', { path: 'src', content: 'x' })).rejects.toThrow(/is a directory/);
  });
});

describe('edit_file', () => {
  it('replaces one exact match and returns the diff', async () => {
    const result = await call('edit_file', {
      path: 'src/main.ts',
      old: 'const b = 2;',
      new: 'const b = 40;',
    });
    expect(result).toMatchObject({ path: 'src/main.ts', added: 1, removed: 1 });
    expect(result.diff).toContain('-const b = 2;');
    expect(result.diff).toContain('+const b = 40;');
    expect(readFileSync(path.join(root, 'src/main.ts'), 'utf8')).toBe(
      'const a = 1;\nconst b = 40;\nconst c = a + b;\n',
    );
  });

  it('refuses an ambiguous match and leaves the file as it was', async () => {
    await expect(call('edit_file', { path: 'twice.txt', old: 'x = 1', new: 'x = 2' })).rejects.toThrow(
      /appears 2 times/,
    );
    expect(readFileSync(path.join(root, 'twice.txt'), 'utf8')).toBe('x = 1\nx = 1\n');
  });

  it('refuses a missing match, and old equal to new', async () => {
    await expect(call('edit_file', { path: 'src/main.ts', old: 'const z', new: 'y' })).rejects.toThrow(
      /not found/,
    );
    await expect(call('edit_file', { path: 'src/main.ts', old: 'a', new: 'a' })).rejects.toThrow(/same text/);
  });

  it('refuses files outside, through links or traversal', async () => {
    for (const requested of ['link-out.txt', '../outside.txt', path.join(base, 'outside.txt')]) {
      await expect(call('edit_file', { path: requested, old: 'OUTSIDE', new: 'PWNED' })).rejects.toThrow(
        /outside the workspace|absolute/,
      );
    }
    expect(readFileSync(path.join(base, 'outside.txt'), 'utf8')).toBe('OUTSIDE');
  });

  it('refuses a file hard-linked to one outside the workspace, and leaves both as they were', async () => {
    writeFileSync(path.join(base, 'victim.txt'), 'VICTIM');
    linkSync(path.join(base, 'victim.txt'), path.join(root, 'hardlink.txt'));
    await expect(call('write_file', { path: 'hardlink.txt', content: '' })).rejects.toThrow(/hard links/);
    await expect(call('edit_file', { path: 'hardlink.txt', old: 'VICTIM', new: 'PWNED' })).rejects.toThrow(
      /hard links/,
    );
    expect(readFileSync(path.join(base, 'victim.txt'), 'utf8')).toBe('VICTIM');
  });

  it('edits through a symlink that stays inside', async () => {
    const result = await call('edit_file', { path: 'link-in.ts', old: 'const a = 1;', new: 'const a = 2;' });
    expect(result.path).toBe('src/main.ts');
  });
});

describe('bash', () => {
  it('runs in the workspace root and reports exit code and both streams', async () => {
    const result = await call('bash', { command: 'pwd; echo oops >&2; exit 3' });
    expect(result.exitCode).toBe(3);
    expect(result.stdout.trim()).toBe(root.startsWith('/') ? realRoot() : root);
    expect(result.stderr.trim()).toBe('oops');
  });

  it('sees none of Cadre’s or the providers’ keys', async () => {
    const result = await call('bash', { command: 'env' });
    expect(result.stdout).toContain('MY_VISIBLE=visible');
    expect(result.stdout).not.toMatch(/sk-secret-openai|cadre-secret|gh-secret/);
    expect(isSecretName('ANTHROPIC_API_KEY')).toBe(true);
    expect(isSecretName('PATH')).toBe(false);
  });

  it('kills the whole process group on a timeout', async () => {
    const pidFile = path.join(base, 'timeout-pid');
    const started = Date.now();
    await expect(
      call('bash', { command: `sleep 30 & echo $! > ${pidFile}; wait`, timeout: 0.5 }),
    ).rejects.toThrow(/time limit of 0.5 s/);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await diesSoon(Number(readFileSync(pidFile, 'utf8')))).toBe(true);
  });

  it('ends what a command leaves running in the background when it exits', async () => {
    const marker = path.join(base, 'late-marker');
    const pidFile = path.join(base, 'background-pid');
    const started = Date.now();
    const result = await call('bash', {
      command: `(sleep 10; echo late > ${marker}) & echo $! > ${pidFile}; echo started`,
    });
    expect(result.stdout.trim()).toBe('started');
    // Without the group kill the call would wait on the forked sleep holding its pipes (10 s).
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await diesSoon(Number(readFileSync(pidFile, 'utf8')))).toBe(true);
    expect(existsSync(marker)).toBe(false);
  });

  it('kills the process group when the run is cancelled', async () => {
    const controller = new AbortController();
    const pidFile = path.join(base, 'cancel-pid');
    const cancellable = toolCaller(
      codingTools({ workspace: root, env: { PATH: process.env.PATH } }),
      testToolContext({ signal: controller.signal }),
    );
    const running = cancellable('bash', { command: `sleep 30 & echo $! > ${pidFile}; wait` });
    await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '');
    controller.abort(new Error('cancelled by the person'));
    await expect(running).rejects.toThrow(/cancelled by the person/);
    expect(await diesSoon(Number(readFileSync(pidFile, 'utf8')))).toBe(true);
  });

  it('records its process group before the command runs, and runs nothing when that record fails', async () => {
    const marker = path.join(root, 'recorded-first.txt');
    const records: Array<Record<string, unknown>> = [];
    const recording = toolCaller(
      codingTools({ workspace: root, env: { PATH: process.env.PATH } }),
      testToolContext({
        recordStart: async (details) => {
          // The shell is up (its group is what is recorded), the command has not run yet.
          records.push({ ...details, ranBefore: existsSync(marker) });
        },
      }),
    );
    const result = await recording('bash', { command: `echo $$ > ${marker}; echo ran`, timeout: 30 });
    expect(result).toMatchObject({ exitCode: 0, stdout: 'ran\n' });
    expect(records).toEqual([
      expect.objectContaining({ ranBefore: false, timeoutMs: 30_000, startedAt: expect.any(Number) }),
    ]);
    // The command ran in the recorded group, as its leader (the shell that held it became the command's).
    expect(records[0]?.pgid).toBe(Number(readFileSync(marker, 'utf8')));
    expect(records[0]?.cwd).toBe(realRoot());

    // A resume that reaches the call finds it ended, and says where it would run now if that moved.
    const bash = codingTools({ workspace: root, env: {} }).find((tool) => tool.name === 'bash')!;
    expect(await bash.interruptedStart!(records[0]!, testToolContext())).toMatch(
      /^It had ended by the time the run resumed \(started \d+ s before the run resumed\)\.$/,
    );
    expect(
      await bash.interruptedStart!({ ...records[0]!, cwd: '/srv/elsewhere' }, testToolContext()),
    ).toMatch(
      new RegExp(`^It had ended .* It ran in /srv/elsewhere; run again, it runs in ${realRoot()}\\.$`),
    );

    rmSync(marker);
    const failing = toolCaller(
      codingTools({ workspace: root, env: { PATH: process.env.PATH } }),
      testToolContext({
        recordStart: async () => {
          throw new Error('the journal is full');
        },
      }),
    );
    await expect(failing('bash', { command: `echo ran > ${marker}` })).rejects.toThrow(
      "the command was not run: its start could not be recorded in the run's journal (the journal is full)",
    );
    expect(existsSync(marker)).toBe(false);
  });

  it('caps huge output, keeping its head and tail', async () => {
    const result = await call('bash', { command: "head -c 20000000 /dev/zero | tr '\\0' a; echo; echo END" });
    expect(result.exitCode).toBe(0);
    expect(result.truncated).toBe(true);
    expect(result.stdout.length).toBeLessThan(31_000);
    expect(result.stdout).toContain('characters of output not kept');
    expect(result.stdout.trim().endsWith('END')).toBe(true);
  });
});

function realRoot(): string {
  return realpathSync(root);
}

/** Alive means running: a killed process left as a zombie (no reaper in a container) counts as dead. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** SIGKILL is delivered when the process is next scheduled: give a loaded machine a moment. */
async function diesSoon(pid: number): Promise<boolean> {
  await waitFor(() => !isAlive(pid));
  return !isAlive(pid);
}

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
}
