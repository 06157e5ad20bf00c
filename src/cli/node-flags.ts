import { accessSync, constants } from 'node:fs';
import { setFlagsFromString } from 'node:v8';

/**
 * Node flags a command runs with. `cadre serve` holds hundreds of streams, and on a machine with a lot of
 * memory V8 gives the young generation 64 MB semi-spaces (128 MB committed), which set the server's peak
 * RSS: 442-519 MB for `npm run bench:server`'s 200 streams, against about 390 MB with 16 MB semi-spaces at
 * the same CPU per stream and latency. The size is read when the heap is set up, so it must be on the
 * command line (`v8.setFlagsFromString` later changes nothing).
 */
export const SERVE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=16'];

/** Commands that keep running (servers): they keep V8's own young-generation sizing. */
const LONG_RUNNING = new Set(['serve', 'mcp']);

/**
 * The V8 setting a command that answers and exits runs with, applied in-process: the young generation
 * does not grow past its first size. A one-shot `cadre ask` keeps ~30 MB alive, but its start-up burst
 * of allocations grew the young generation to ~30 MB more (heap snapshot: 27 MB live in a 57 MB heap),
 * and its peak memory with it; kept small, the same command peaks 20-45 MB lower for the same CPU time.
 * Unlike the semi-space maximum, the growth factor is read as the heap grows, so it can be set now.
 */
export const ONE_SHOT_V8_FLAGS: readonly string[] = ['--semi-space-growth-factor=1'];

/** Applies `ONE_SHOT_V8_FLAGS` unless the command keeps running or the user sized the young generation. */
export function tuneHeapForCommand(
  argv: readonly string[],
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? '',
): string[] {
  if (LONG_RUNNING.has(argv[0] ?? '')) return [];
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].map((arg) => arg.replaceAll('_', '-'));
  if (given.some((arg) => /^--(max-|min-)?semi-space-(size|growth-factor)/.test(arg))) return [];
  for (const flag of ONE_SHOT_V8_FLAGS) setFlagsFromString(flag);
  return [...ONE_SHOT_V8_FLAGS];
}

/** The flags command `argv[0]` wants that this process was not started with (none when the user set them). */
export function missingNodeFlags(
  argv: readonly string[],
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? '',
): string[] {
  if (argv[0] !== 'serve') return [];
  const given = [...execArgv, ...nodeOptions.split(/\s+/)];
  return SERVE_NODE_FLAGS.filter((flag) => {
    const name = flag.split('=')[0]!;
    // Either spelling counts: Node accepts `--max_semi_space_size` too.
    return !given.some((arg) => arg.replaceAll('_', '-').split('=')[0] === name);
  });
}

/**
 * Replaces this process with the same command run with the flags it wants (`process.execve`: same pid, so
 * signals, exit codes and a process manager's view are unchanged). Returns when there is nothing to add,
 * when the platform cannot (Windows, a worker thread, Node's permission model, a binary that cannot be
 * run again) or when it should not (a parent's IPC channel would close); the command then runs as it is.
 * Setting the flag yourself (NODE_OPTIONS) skips the restart.
 */
export function restartWithNodeFlags(argv: readonly string[]): void {
  const flags = missingNodeFlags(argv);
  if (flags.length === 0 || typeof process.execve !== 'function') return;
  // A parent's IPC channel (child_process.fork, pm2) does not survive execve: the parent would see its
  // child disconnect at once. A debugger attached to this process would be left behind with the old image.
  if (process.channel || debugging()) return;
  // When the execve call itself fails, Node does not throw: it aborts the process (its exit handlers
  // have already run). What can be checked first is: the binary is still there and may be executed.
  try {
    accessSync(process.execPath, constants.X_OK);
  } catch {
    return;
  }
  try {
    process.execve(process.execPath, [
      process.execPath,
      ...flags,
      ...process.execArgv,
      ...process.argv.slice(1),
    ]);
  } catch {
    // Refused before the call (a worker thread, the permission model without child processes): run with
    // V8's own sizing.
  }
}

/** True when Node was asked to open its inspector (`--inspect`, `--inspect-brk`, `--inspect-wait`). */
function debugging(): boolean {
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  return given.some((arg) => /^--inspect(-brk|-wait)?(=|$)/.test(arg));
}
