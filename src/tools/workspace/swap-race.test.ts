import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testToolContext, toolCaller } from '../../core/test-tool-context.ts';
import { codingTools } from '../coding/index.ts';
import { workspaceTools } from './index.ts';

/*
 * A shared server's user can run commands in their own root (sandboxed bash) while their agent calls the
 * file tools, which run in the server's process. The command below is such a user's: a real process that
 * keeps swapping the folder `sub` in their root with a symbolic link to a neighbour's root, by renames,
 * while the tools are called on paths under `sub`. A check of the path followed by an open by name loses
 * this race; opening each component from a held folder without following links does not.
 */

let base: string;
let root: string;
let neighbour: string;
let swapper: ChildProcess | undefined;

/**
 * The attacker's command: `renameat2(RENAME_EXCHANGE)` in a loop (Python's ctypes), so that `sub` is always
 * there, a folder one moment and the link the next. Where Python is missing, renames in a loop (Node)
 * do the same with gaps. Each prints a line once it has swapped.
 */
const EXCHANGE_LOOP = `
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = (name.encode() for name in sys.argv[1:3])
swaps = 0
while True:
    libc.renameat2(-100, a, -100, b, 2)
    swaps += 1
    if swaps == 50:
        print('swapping', flush=True)
`;
const RENAME_LOOP = `
const fs = require('node:fs');
const [folder, link, parked] = process.argv.slice(1);
let swaps = 0;
for (;;) {
  try {
    fs.renameSync(folder, parked);
    fs.renameSync(link, folder);
    fs.renameSync(folder, link);
    fs.renameSync(parked, folder);
  } catch {}
  if (++swaps === 50) process.stdout.write('swapping\\n');
}`;
const python = spawnSync('python3', ['-c', 'import ctypes; ctypes.CDLL(None).renameat2']).status === 0;

/** Starts the swapping process in `root` and resolves once it has swapped (its first line). */
function startSwapping(root: string): Promise<ChildProcess> {
  const [folder, link] = [path.join(root, 'sub'), path.join(root, 'swap')];
  const child = python
    ? spawn('python3', ['-c', EXCHANGE_LOOP, folder, link], { stdio: ['ignore', 'pipe', 'inherit'] })
    : spawn(process.execPath, ['-e', RENAME_LOOP, folder, link, path.join(root, '.parked')], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.stdout!.once('data', () => resolve(child));
  });
}

async function stopSwapping(): Promise<void> {
  const child = swapper;
  swapper = undefined;
  if (!child || child.exitCode !== null) return;
  const gone = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await gone;
}

beforeAll(async () => {
  base = mkdtempSync(path.join(tmpdir(), 'cadre-race-'));
  root = path.join(base, 'bob');
  neighbour = path.join(base, 'alice');
  mkdirSync(path.join(root, 'sub'), { recursive: true });
  mkdirSync(neighbour);
  writeFileSync(path.join(root, 'sub', 'notes.txt'), 'BOB-OWN\n');
  writeFileSync(path.join(neighbour, 'notes.txt'), 'ALICE-SECRET\n');
  writeFileSync(path.join(neighbour, 'alice-only.txt'), 'ALICE-SECRET\n');
  symlinkSync(neighbour, path.join(root, 'swap'));
  swapper = await startSwapping(root);
});

afterAll(async () => {
  await stopSwapping();
  rmSync(base, { recursive: true, force: true });
});

const ATTEMPTS = 1000;

/** Runs `attempt` many times while the folder is being swapped; counts outcomes by kind. */
async function race(
  attempt: (index: number) => Promise<'inside' | 'escaped' | 'refused'>,
  attempts = ATTEMPTS,
) {
  const counts = { inside: 0, escaped: 0, refused: 0 };
  for (let index = 0; index < attempts; index++) {
    counts[await attempt(index).catch(() => 'refused' as const)]++;
  }
  return counts;
}

describe('the file tools against a process swapping a folder for a link out of the root', () => {
  it('read_file never reads the neighbour', async () => {
    const call = toolCaller(workspaceTools(root), testToolContext());
    const counts = await race(async () => {
      const result = await call('read_file', { path: 'sub/notes.txt' });
      return result.content.includes('ALICE') ? 'escaped' : 'inside';
    });
    expect(counts.escaped).toBe(0);
    expect(counts.inside).toBeGreaterThan(0);
  });

  it('list_dir never lists the neighbour', async () => {
    const call = toolCaller(workspaceTools(root), testToolContext());
    const counts = await race(async () => {
      const result = await call('list_dir', { path: 'sub' });
      const names = result.entries.map((entry: { name: string }) => entry.name);
      return names.includes('alice-only.txt') ? 'escaped' : 'inside';
    });
    expect(counts.escaped).toBe(0);
    expect(counts.inside).toBeGreaterThan(0);
  });

  it('grep never searches the neighbour', async () => {
    const call = toolCaller(workspaceTools(root), testToolContext());
    const counts = await race(async () => {
      const result = await call('grep', { pattern: 'SECRET|OWN' });
      const texts = result.matches.map((match: { text: string }) => match.text).join('\n');
      return texts.includes('ALICE') ? 'escaped' : texts.includes('BOB') ? 'inside' : 'refused';
    }, ATTEMPTS / 2);
    expect(counts.escaped).toBe(0);
    expect(counts.inside).toBeGreaterThan(0);
  });

  it('write_file and edit_file never write into the neighbour', async () => {
    const call = toolCaller(codingTools({ workspace: root, env: {} }), testToolContext({ agent: 'main' }));
    const written = await race(async (index) => {
      await call('write_file', { path: `sub/new-${index}.txt`, content: 'FROM-BOB\n' });
      return 'inside';
    });
    const edited = await race(async () => {
      const result = await call('edit_file', { path: 'sub/notes.txt', old: 'SECRET', new: 'EDITED' });
      return result.diff.includes('EDITED') ? 'escaped' : 'inside';
    });
    await stopSwapping();
    const intruders = readdirSync(neighbour).filter((name) => name.startsWith('new-'));
    expect(intruders).toEqual([]);
    expect(edited.escaped).toBe(0);
    expect(written.inside).toBeGreaterThan(0);
    expect(existsSync(path.join(neighbour, 'notes.txt'))).toBe(true);
  });
});

describe('the file tools against a process swapping a folder for a link to named pipes', () => {
  let pipes: string;
  let pipeSwapper: ChildProcess | undefined;

  beforeAll(async () => {
    pipes = mkdtempSync(path.join(tmpdir(), 'cadre-race-pipes-'));
    const own = path.join(pipes, 'bob');
    mkdirSync(path.join(own, 'sub'), { recursive: true });
    mkdirSync(path.join(pipes, 'fifos'));
    writeFileSync(path.join(own, 'sub', 'notes.txt'), 'BOB-OWN\n');
    writeFileSync(path.join(pipes, 'steady.txt'), 'read by the test after the race\n');
    // What a swapped-in pipe does to an open() that blocks: it waits for a writer that never comes.
    execFileSync('mkfifo', [path.join(pipes, 'fifos', 'notes.txt'), path.join(pipes, 'fifos', '.gitignore')]);
    symlinkSync(path.join(pipes, 'fifos'), path.join(own, 'swap'));
    pipeSwapper = await startSwapping(own);
  });

  afterAll(async () => {
    const child = pipeSwapper;
    if (child && child.exitCode === null) {
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await gone;
    }
    rmSync(pipes, { recursive: true, force: true });
  });

  it('no read_file, grep or write_file call parks a thread on a pipe; files still read at once after', async () => {
    const own = path.join(pipes, 'bob');
    const call = toolCaller(
      [...workspaceTools(own), ...codingTools({ workspace: own, env: {} })],
      testToolContext({ agent: 'main' }),
    );
    const counts = await race(async (index) => {
      const read = await call('read_file', { path: 'sub/notes.txt' }).catch(() => undefined);
      if (index % 10 === 0) await call('grep', { pattern: 'OWN' });
      await call('write_file', { path: 'sub/new.txt', content: 'x' }).catch(() => undefined);
      return read ? 'inside' : 'refused';
    }, ATTEMPTS / 2);
    expect(counts.inside).toBeGreaterThan(0);
    // With all four of libuv's threads parked in open(), this read would never end.
    const started = performance.now();
    await readFile(path.join(pipes, 'steady.txt'));
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
