import { spawn } from 'node:child_process';
import { z } from 'zod';
import { SystemError, UserError } from '../../core/errors.ts';
import { defineTool } from '../../core/tool.ts';
import { Workspace } from '../workspace/confine.ts';
import { asWorkspaces, codingAllowed, type Workspaces, workspaceOf } from '../workspace/workspaces.ts';
import type { CommandSandbox } from './command-sandbox.ts';
import { HeadTailBuffer } from './output-buffer.ts';
import { type StartedGroup, startedGroup, stopInterruptedGroup } from './process-group.ts';
import { sandboxEnvironment, scrubbedEnvironment } from './scrub-env.ts';
import { readShellCommand } from './shell-command.ts';

export interface BashOptions {
  workspace: Workspaces | Workspace | string;
  /** Runs the commands of users whose workspace asks for a sandbox; without one, they are refused. */
  sandbox?: CommandSandbox;
  /** The environment commands start from (scrubbed of keys); `process.env` in production. */
  env: Record<string, string | undefined>;
  /** Default and largest time limit, in seconds. */
  defaultTimeoutSeconds?: number;
  maxTimeoutSeconds?: number;
  /** Characters of stdout and of stderr the result keeps (head and tail). */
  maxOutputChars?: number;
  /** The shell; `/bin/bash` unless a test or a platform says otherwise. */
  shell?: string;
  /** Whether this process runs as root (a test may say); `process.getuid() === 0` by default. */
  runningAsRoot?: () => boolean;
}

export interface BashOutput {
  command: string;
  exitCode: number | null;
  /** The signal that ended the command, when one did. */
  signal?: string;
  stdout: string;
  stderr: string;
  truncated?: boolean;
  ms: number;
}

const DEFAULT_TIMEOUT_SECONDS = 120;
const MAX_TIMEOUT_SECONDS = 600;
const DEFAULT_MAX_OUTPUT_CHARS = 30_000;

/**
 * `bash {command, timeout?}`: runs one shell command in the workspace root. The command gets its own
 * process group, so on a timeout, a cancellation or its own exit every process it started is killed
 * (nothing it forks outlives the call), its output is capped, and its environment holds no keys.
 *
 * Only a dead Cadre cannot kill the group: so before the command runs, its group is recorded in the run's
 * journal (`recordStart`), and a resumed run that reaches the same call stops what is left of it and asks
 * the person again, saying it may have run (`interruptedStart`, process-group.ts).
 */
export function createBashTool(options: BashOptions) {
  const defaultTimeout = options.defaultTimeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
  const maxTimeout = options.maxTimeoutSeconds ?? MAX_TIMEOUT_SECONDS;
  const maxChars = options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS;
  const workspaces = asWorkspaces(options.workspace);
  return defineTool({
    name: 'bash',
    family: 'coding',
    explicitOnly: true,
    needsApproval: true,
    description:
      `Run a shell command (bash) in the workspace root and return its exit code, stdout and stderr. ` +
      `timeout is in seconds (default ${defaultTimeout}, at most ${maxTimeout}). Output past ` +
      `${maxChars} characters per stream is cut in the middle. Processes the command leaves in the ` +
      `background are ended when it exits.`,
    input: z.object({
      command: z.string().min(1).max(20_000).describe('The command line, run with bash -c'),
      timeout: z.number().positive().max(maxTimeout).optional().describe('Time limit in seconds'),
    }),
    approvalSubject: async ({ command }) => readShellCommand(command),
    async interruptedStart(started, context) {
      const said = await stopInterruptedGroup(started as Partial<StartedGroup>);
      // A resume in another folder (a server started elsewhere, another --workspace) would run it there.
      const here = workspaces.of(context.userId);
      const now = here instanceof Workspace ? here.root : undefined;
      return typeof started.cwd === 'string' && now && started.cwd !== now
        ? `${said} It ran in ${started.cwd}; run again, it runs in ${now}.`
        : said;
    },
    async execute({ command, timeout }, context) {
      codingAllowed(workspaces, context, 'bash');
      const workspace = workspaceOf(workspaces, context);
      const policy = workspaces.sandboxFor(context.userId);
      let line = command;
      let release = () => {};
      if (policy) {
        const asRoot = options.runningAsRoot ?? (() => process.getuid?.() === 0);
        if (asRoot() && !policy.asRoot) {
          throw new UserError(
            'sandbox_as_root',
            'bash is refused for the users of a shared server while it runs as root: run Cadre as an account of its own (or, knowing the risk, set multiUser.sandboxAsRoot)',
            {},
          );
        }
        // Another person's command: it runs sandboxed in their own root, or not at all.
        const problem = options.sandbox
          ? await options.sandbox.problem()
          : 'this Cadre was built without a command sandbox';
        if (problem || !options.sandbox) {
          throw new UserError(
            'sandbox_unavailable',
            `bash is refused for the users of a shared server when their commands cannot run in a sandbox, and they cannot here: ${problem}`,
            {},
          );
        }
        ({ line, release } = await options.sandbox.wrap(command, workspace.root, policy));
      }
      const timeoutMs = (timeout ?? defaultTimeout) * 1000;
      const record = context.recordStart;
      return runCommand(line, {
        shown: command,
        cwd: workspace.root,
        env: policy
          ? sandboxEnvironment(options.env, policy.passEnv, workspace.root)
          : scrubbedEnvironment(options.env),
        timeoutMs,
        maxChars,
        shell: options.shell ?? '/bin/bash',
        signal: context.signal,
        ...(record
          ? {
              beforeRun: (pid: number) =>
                record({ ...startedGroup(pid, Date.now(), timeoutMs), cwd: workspace.root }),
            }
          : {}),
      }).finally(release);
    },
  });
}

interface RunOptions {
  /** The command as the model wrote it (the line run may be its sandboxed form). */
  shown: string;
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  maxChars: number;
  shell: string;
  signal: AbortSignal;
  /**
   * Called with the group's id once the shell is up and before the command runs: the command starts
   * when it resolves, and never when it fails (or when Cadre dies first).
   */
  beforeRun?: (pid: number) => Promise<void>;
}

/**
 * The shell that holds the command until Cadre says go on fd 3 (its group is recorded by then), then
 * becomes the shell that runs it, as `bash -c COMMAND` would. A Cadre that dies first closes fd 3: the
 * read ends empty and the command never runs.
 */
const HELD_START = 'IFS= read -r go <&3 && [ "$go" = go ] || exit 125; exec 3<&-; exec "$0" -c "$1"';

function runCommand(command: string, options: RunOptions): Promise<BashOutput> {
  options.signal.throwIfAborted();
  const started = performance.now();
  const stdout = new HeadTailBuffer(options.maxChars);
  const stderr = new HeadTailBuffer(options.maxChars);
  // detached: the shell leads a new process group, so one kill(-pid) reaches everything it started.
  const held = options.beforeRun !== undefined;
  const child = spawn(options.shell, held ? ['-c', HELD_START, options.shell, command] : ['-c', command], {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: held ? ['ignore', 'pipe', 'pipe', 'pipe'] : ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => stdout.push(chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));

  const killGroup = () => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // The group is already gone.
    }
  };
  let notStarted: unknown;
  if (held && child.pid !== undefined) {
    const go = child.stdio[3] as NodeJS.WritableStream & { on(event: 'error', listener: () => void): void };
    // The shell may be gone before the word arrives (killed by a timeout or a cancellation meanwhile).
    go.on('error', () => {});
    options.beforeRun!(child.pid).then(
      () => go.end('go\n'),
      (error: unknown) => {
        notStarted = error;
        killGroup();
      },
    );
  }
  return new Promise<BashOutput>((resolve, reject) => {
    let stopped: 'timeout' | 'cancelled' | undefined;
    const stop = (why: 'timeout' | 'cancelled') => {
      stopped ??= why;
      killGroup();
    };
    const timer = setTimeout(() => stop('timeout'), options.timeoutMs);
    const onAbort = () => stop('cancelled');
    options.signal.addEventListener('abort', onAbort, { once: true });
    // When the shell exits, whatever it left running in the background is ended too; otherwise a
    // forked `sleep` would hold the pipes open and the call would wait for it.
    child.on('exit', () => killGroup());
    child.on('error', (error) => {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      reject(new SystemError('bash_start_failed', `could not start ${options.shell}: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      const ms = Math.round(performance.now() - started);
      if (stopped === 'cancelled') {
        reject(options.signal.reason ?? new Error('cancelled'));
        return;
      }
      if (notStarted !== undefined) {
        reject(
          new SystemError(
            'bash_not_started',
            `the command was not run: its start could not be recorded in the run's journal (${notStarted instanceof Error ? notStarted.message : String(notStarted)})`,
          ),
        );
        return;
      }
      if (stopped === 'timeout') {
        const tail = (stdout.text() + stderr.text()).slice(-2000);
        reject(
          new SystemError(
            'bash_failed',
            `the command ran past its time limit of ${options.timeoutMs / 1000} s and was killed` +
              (tail.trim() ? `; its last output:\n${tail}` : ''),
          ),
        );
        return;
      }
      resolve({
        command: options.shown,
        exitCode: code,
        ...(signal ? { signal } : {}),
        stdout: stdout.text(),
        stderr: stderr.text(),
        ...(stdout.truncated || stderr.truncated ? { truncated: true } : {}),
        ms,
      });
    });
  });
}
