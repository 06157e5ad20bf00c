import { type ChildProcess, spawn } from 'node:child_process';
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

/** Runs `cadre ARGS` in a child process with exactly `env` (plus PATH), as a person would. */
export function runCli(
  args: string[],
  env: Record<string, string>,
  options: { cwd?: string; stdin?: string; onSpawn?: (child: ChildProcess) => void } = {},
): Promise<CliResult> {
  const started = performance.now();
  const child = spawn(process.execPath, [CLI_ENTRY, ...args], {
    // TMPDIR too: whatever the command writes to its temp folder goes where the test run cleans up.
    env: { PATH: process.env.PATH ?? '', TMPDIR: tmpdir(), ...env },
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
