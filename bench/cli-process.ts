/**
 * Runs one command in a fresh Node process and measures what the person waiting sees: its wall time, its
 * peak memory (max RSS, read by a tiny preload as the process exits, so no /usr/bin/time is needed) and
 * when the scripted model server got its first request.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The `cadre` command as a person starts it. */
export const CADRE_BIN = fileURLToPath(new URL('../bin/cadre.js', import.meta.url));
/**
 * Writes the process's peak resident memory (KB) to `BENCH_MAX_RSS_FILE` as it exits. JavaScript, given
 * inline: a TypeScript preload would load Node's type stripper (amaro, ~60 ms of CPU) into every measured
 * process before `cadre` turns its compile cache on, a cost the command itself never pays.
 */
const MAX_RSS_PRELOAD = `data:text/javascript,${encodeURIComponent(
  "const file = process.env.BENCH_MAX_RSS_FILE; if (file) process.on('exit', () => " +
    "process.getBuiltinModule('node:fs').writeFileSync(file, String(process.resourceUsage().maxRSS)));",
)}`;

export interface ProcessFigures {
  code: number | null;
  /** From spawn to exit, in ms. */
  wallMs: number;
  /** Peak resident memory of the process, in MB. */
  maxRssMb: number;
  /** When the process started (epoch ms), to compare with a fixture server's `receivedAt`. */
  startedAt: number;
  stdout: string;
  stderr: string;
}

/** Runs `node <args>` with `env` (on top of PATH) and a fresh folder for its files. */
export async function measureProcess(
  args: string[],
  env: Record<string, string> = {},
): Promise<ProcessFigures> {
  const folder = mkdtempSync(join(tmpdir(), 'cadre-bench-process-'));
  const rssFile = join(folder, 'max-rss');
  const startedAt = Date.now();
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', MAX_RSS_PRELOAD, ...args], {
    env: { PATH: process.env.PATH ?? '', CADRE_HOME: folder, BENCH_MAX_RSS_FILE: rssFile, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const wallMs = performance.now() - started;
  let maxRssMb = Number.NaN;
  try {
    maxRssMb = Number(readFileSync(rssFile, 'utf8')) / 1024;
  } catch {
    // The process died before its exit handlers ran.
  }
  rmSync(folder, { recursive: true, force: true });
  return { code, wallMs, maxRssMb, startedAt, stdout, stderr };
}

/** The median of some samples. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
