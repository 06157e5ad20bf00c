import { execFileSync } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testToolContext, toolCaller } from '../../core/test-tool-context.ts';
import { OutsideWorkspaceError, Workspace, workspaceTools } from './index.ts';

let base: string;
let root: string;
let call: ReturnType<typeof toolCaller>;

const context = testToolContext({ agent: 'explorer' });

beforeAll(() => {
  base = mkdtempSync(path.join(tmpdir(), 'cadre-ws-'));
  root = path.join(base, 'ws');
  const sibling = path.join(base, 'ws-secret');
  mkdirSync(path.join(root, 'src', 'nested'), { recursive: true });
  mkdirSync(path.join(root, 'dist'), { recursive: true });
  mkdirSync(sibling);
  writeFileSync(path.join(sibling, 'secret.txt'), 'SIBLING-SECRET');
  writeFileSync(path.join(base, 'outside.txt'), 'OUTSIDE-SECRET');
  writeFileSync(path.join(root, '.gitignore'), 'dist/\n*.log\n');
  writeFileSync(path.join(root, 'src', '.gitignore'), 'generated.ts\n');
  writeFileSync(path.join(root, 'src', 'main.ts'), 'export function main() {\n  return helper(2);\n}\n');
  writeFileSync(
    path.join(root, 'src', 'nested', 'helper.ts'),
    'export function helper(x: number) {\n  return x * 2;\n}\n',
  );
  writeFileSync(path.join(root, 'src', 'generated.ts'), 'export const helperGenerated = 1;\n');
  writeFileSync(path.join(root, 'dist', 'main.js'), 'function helper() {}\n');
  writeFileSync(path.join(root, 'debug.log'), 'helper log line\n');
  writeFileSync(path.join(root, 'image.bin'), Buffer.from([0x68, 0x65, 0x6c, 0x70, 0x65, 0x72, 0, 1, 2]));
  writeFileSync(
    path.join(root, 'README.md'),
    Array.from({ length: 50 }, (_, i) => `line ${i + 1}`).join('\n'),
  );
  symlinkSync(path.join(base, 'outside.txt'), path.join(root, 'link-out.txt'));
  symlinkSync(sibling, path.join(root, 'linked-dir'));
  symlinkSync(path.join(root, 'src', 'main.ts'), path.join(root, 'link-in.ts'));
  call = toolCaller(workspaceTools(root), context);
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('workspace confinement', () => {
  const refused: Array<[string, string]> = [
    ['parent traversal', '../outside.txt'],
    ['traversal hidden in the middle', 'src/../../outside.txt'],
    ['absolute path', '/etc/passwd'],
    ['sibling folder sharing the root as a prefix', '../ws-secret/secret.txt'],
    ['symbolic link to a file outside', 'link-out.txt'],
    ['file under a symlinked parent folder', 'linked-dir/secret.txt'],
    ['home-relative path', '~/.ssh/id_rsa'],
  ];

  for (const [label, requested] of refused) {
    it(`read_file refuses ${label}`, async () => {
      await expect(call('read_file', { path: requested })).rejects.toBeInstanceOf(OutsideWorkspaceError);
    });
  }

  it('a string-prefix check would have let the sibling through; the relative check does not', () => {
    const workspace = new Workspace(root);
    const sibling = path.join(workspace.root.slice(0, -'ws'.length), 'ws-secret', 'secret.txt');
    expect(sibling.startsWith(workspace.root)).toBe(true);
    expect(workspace.contains(sibling)).toBe(false);
  });

  it('list_dir refuses the symlinked parent and a traversal', async () => {
    await expect(call('list_dir', { path: 'linked-dir' })).rejects.toBeInstanceOf(OutsideWorkspaceError);
    await expect(call('list_dir', { path: '..' })).rejects.toBeInstanceOf(OutsideWorkspaceError);
  });

  it('glob refuses patterns that climb out', async () => {
    await expect(call('glob', { pattern: '../**/*.txt' })).rejects.toThrow(/outside the workspace/);
    await expect(call('glob', { pattern: '/etc/*' })).rejects.toThrow(/outside the workspace/);
  });

  it('a symlink that stays inside the root is followed', async () => {
    const result = await call('read_file', { path: 'link-in.ts' });
    expect(result.path).toBe('src/main.ts');
  });
});

describe('glob', () => {
  it('matches relative paths and leaves out .gitignore-d and outside-linked files', async () => {
    const result = await call('glob', { pattern: '**/*.ts' });
    expect(result.files).toEqual(['link-in.ts', 'src/main.ts', 'src/nested/helper.ts']);
  });

  it('matches bare names anywhere', async () => {
    const result = await call('glob', { pattern: '*.txt' });
    expect(result.files).toEqual([]);
  });
});

describe('grep', () => {
  it('finds regex matches, honouring .gitignore and skipping binaries', async () => {
    const result = await call('grep', { pattern: 'helper\\(' });
    const paths = result.matches.map((match: { path: string }) => match.path);
    expect(paths).toContain('src/main.ts');
    expect(paths).toContain('src/nested/helper.ts');
    expect(paths).not.toContain('dist/main.js');
    expect(paths).not.toContain('debug.log');
    expect(paths).not.toContain('src/generated.ts');
    expect(result.skippedBinary).toBe(1);
    expect(JSON.stringify(result)).not.toContain('SECRET');
  });

  it('limits files with a glob and caps results', async () => {
    const result = await call('grep', { pattern: 'line \\d+', glob: '*.md', max_results: 3 });
    expect(result.matches).toHaveLength(3);
    expect(result.truncated).toBe(true);
    expect(result.matches[0]).toEqual({ path: 'README.md', line: 1, text: 'line 1' });
  });

  it('says so when the regex is invalid', async () => {
    await expect(call('grep', { pattern: '(' })).rejects.toThrow(/invalid regular expression/);
  });
});

describe('read_file and list_dir', () => {
  it('reads a line range', async () => {
    const result = await call('read_file', { path: 'README.md', offset: 10, limit: 3 });
    expect(result).toMatchObject({
      startLine: 10,
      endLine: 12,
      totalLines: 50,
      content: 'line 10\nline 11\nline 12',
      truncated: true,
    });
  });

  it('refuses binary files', async () => {
    await expect(call('read_file', { path: 'image.bin' })).rejects.toThrow(/binary/);
  });

  it('lists a folder, folders first, marking ignored entries and not sizing outside links', async () => {
    const result = await call('list_dir', { path: '.' });
    const names = result.entries.map((entry: { name: string }) => entry.name);
    expect(names.slice(0, 3)).toEqual(['dist', 'src', '.gitignore']);
    expect(result.entries.find((entry: { name: string }) => entry.name === 'dist').ignored).toBe(true);
    const linkOut = result.entries.find((entry: { name: string }) => entry.name === 'link-out.txt');
    expect(linkOut).toEqual({ name: 'link-out.txt', type: 'link' });
  });
});

describe('hostile files in the workspace', () => {
  let hostile: string;
  let hostileCall: ReturnType<typeof toolCaller>;
  /**
   * A named pipe holding `content`, its writer kept open for a moment: a read that should never start
   * gets `content` and then ends instead of blocking the test.
   */
  function fifo(file: string, content = ''): () => void {
    execFileSync('mkfifo', [file]);
    const writer = openSync(file, 'r+');
    if (content) writeSync(writer, content);
    const timer = setTimeout(() => closeSync(writer), 300);
    return () => {
      clearTimeout(timer);
      try {
        closeSync(writer);
      } catch {}
    };
  }

  beforeAll(() => {
    hostile = path.join(base, 'hostile');
    mkdirSync(path.join(hostile, 'sub'), { recursive: true });
    writeFileSync(path.join(base, 'outside-rules'), '*\n');
    writeFileSync(path.join(hostile, 'a.ts'), 'export const a = 1;\n');
    writeFileSync(path.join(hostile, 'sub', 'b.ts'), 'export const b = 2;\n');
    // A cloned repository may hold a .gitignore that is a symbolic link out of the root.
    symlinkSync(path.join(base, 'outside-rules'), path.join(hostile, 'sub', '.gitignore'));
    hostileCall = toolCaller(workspaceTools(hostile), context);
  });

  it('a .gitignore linked to a file outside the root is not read', async () => {
    const result = await hostileCall('glob', { pattern: '**/*.ts' });
    expect(result.files).toEqual(['a.ts', 'sub/b.ts']);
  });

  it('read_file refuses a named pipe instead of blocking on it', async () => {
    const release = fifo(path.join(hostile, 'pipe.txt'));
    try {
      await expect(hostileCall('read_file', { path: 'pipe.txt' })).rejects.toThrow(/not a regular file/);
    } finally {
      release();
      rmSync(path.join(hostile, 'pipe.txt'));
    }
  });

  it('a .gitignore that is a named pipe is not read', async () => {
    const release = fifo(path.join(hostile, '.gitignore'), 'a.ts\n');
    try {
      const result = await hostileCall('glob', { pattern: 'a.ts' });
      expect(result.files).toEqual(['a.ts']);
    } finally {
      release();
      rmSync(path.join(hostile, '.gitignore'));
    }
  });
});

describe('a workspace root that does not exist', () => {
  it('builds its tools and answers each call with not found', async () => {
    const missing = new Map(
      workspaceTools(path.join(tmpdir(), 'cadre-no-such-root')).map((tool) => [tool.name, tool]),
    );
    const readFileTool = missing.get('read_file')!;
    await expect(readFileTool.execute({ path: 'a.txt' }, context)).rejects.toThrow(/no such file/);
  });
});
