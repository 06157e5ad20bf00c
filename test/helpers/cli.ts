import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI_ENTRY = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** A fresh, empty CADRE_HOME. */
export function tempHome(): string {
  return mkdtempSync(join(tmpdir(), 'cadre-test-'));
}

/** The variables of a `cadre` whose model is a fixture OpenAI-compatible server, in `home` (a fresh one). */
export function fixtureModelEnv(
  model: { baseURL: string },
  home = tempHome(),
): { CADRE_HOME: string; CADRE_MODEL: string; CADRE_COMPATIBLE_BASE_URL: string } {
  return { CADRE_HOME: home, CADRE_MODEL: 'compatible:fixture', CADRE_COMPATIBLE_BASE_URL: model.baseURL };
}

/**
 * What a `cadre` child process gets besides the test's own variables: PATH, this run's TMPDIR (whatever the
 * command writes to its temp folder goes where the test run cleans up), and Node's compile cache, which the
 * `cadre` a person runs keeps on (bin/cadre.js): without it every process the tests start strips and
 * compiles its ~500 modules again (the person-waiting bench's "empty compile cache" row, ~400 ms each).
 */
export function childEnv(env: Record<string, string>): Record<string, string> {
  const cache = process.env.NODE_COMPILE_CACHE;
  return {
    PATH: process.env.PATH ?? '',
    TMPDIR: tmpdir(),
    ...(cache ? { NODE_COMPILE_CACHE: cache } : {}),
    ...testModeDatabase(env),
    ...env,
  };
}

const schemaByHome = new Map<string, string>();

/**
 * With CADRE_TEST_MODE=postgres (a PostgreSQL pass over the tests), a `cadre` process gets a
 * CADRE_DATABASE_URL: one schema per CADRE_HOME, made here (synchronously, with psql, since a child is
 * spawned at once), so processes sharing a home share a database as they would share cadre.db.
 */
export function testModeDatabase(env: Record<string, string | undefined>): Record<string, string> {
  const url = process.env.CADRE_TEST_DATABASE_URL;
  if (process.env.CADRE_TEST_MODE !== 'postgres' || !url || env.CADRE_DATABASE_URL || !env.CADRE_HOME)
    return {};
  let withPath = schemaByHome.get(env.CADRE_HOME);
  if (!withPath) {
    const schema = `proc_${process.pid}_${schemaByHome.size}_${Math.random().toString(36).slice(2, 7)}`;
    execFileSync('psql', [url, '-q', '-c', `CREATE SCHEMA ${schema}`]);
    const parsed = new URL(url);
    parsed.searchParams.set('options', `-c search_path=${schema}`);
    withPath = parsed.toString();
    schemaByHome.set(env.CADRE_HOME, withPath);
  }
  return { CADRE_DATABASE_URL: withPath };
}

/** Runs `cadre ARGS` in a child process with exactly `env` (plus `childEnv`'s), as a person would. */
export function runCli(
  args: string[],
  env: Record<string, string>,
  options: { cwd?: string; stdin?: string; onSpawn?: (child: ChildProcess) => void } = {},
): Promise<CliResult> {
  const started = performance.now();
  const child = spawn(process.execPath, [CLI_ENTRY, ...args], {
    env: childEnv(env),
    cwd: options.cwd ?? process.cwd(),
    stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (options.stdin !== undefined) {
    // A command that refuses its input exits before reading it all: that is an answer, not a test error.
    child.stdin?.on('error', () => {});
    child.stdin?.end(options.stdin);
  }
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr!.on('data', (chunk) => {
    stderr += chunk;
  });
  options.onSpawn?.(child);
  return new Promise((resolve) => {
    child.on('close', (code, signal) =>
      resolve({ code, signal, stdout, stderr, ms: performance.now() - started }),
    );
  });
}

/**
 * What a `cadre` command wrote on stderr besides the line saying its question waited on the queue for a
 * worker (runs as jobs): a tree that waits for a busy one-slot worker, or a loaded machine, says so, and
 * tests that expect no complaint read the rest.
 */
export function complaints(stderr: string): string {
  return stderr.replaceAll('cadre: queued: no worker has taken it yet\n', '');
}
