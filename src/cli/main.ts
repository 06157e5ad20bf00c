import { readFileSync } from 'node:fs';
import { EXIT } from '../app/error-maps.ts';
import type { CliCommand, CliContext } from './cli-context.ts';
import { exitQuietlyOnClosedPipe } from './closed-pipe.ts';
import { restartWithNodeFlags, tuneHeapForCommand } from './node-flags.ts';

export const VERSION: string = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
).version;

const USAGE = `cadre ${VERSION}: a main agent that delegates to isolated, bounded, visible sub-agents

usage:
  cadre ask "QUESTION" [--agent NAME] [--model P:M] [--json | --events] [--session ID | -c]
            [--workspace DIR] [--max-turns N] [--budget TOKENS] [--timeout SECONDS]
            [--approve-all | --deny-all]
  cadre chat [--session ID | -c] [--model P:M] [--agent NAME] [--max-turns N] [--budget T] [--timeout S]
             [--approve-all | --deny-all]
  cadre sessions list [--json] | rm ID
  cadre agents list | show NAME | check [FILE...]
  cadre runs list [--json] [--running] | show ID [--json | --verbose] | stop ID | say ID "TEXT"
            | rm ID... | prune --older-than 30d | resume ID [--approve-all | --deny-all]
  cadre docs add FILE... | list | search "Q" | rm ID...
  cadre mcp                      serve the agents as MCP tools over stdio
  cadre mcp list | trust [DIR] | untrust [DIR]
  cadre serve [--host 127.0.0.1] [--port 4319]
  cadre users add NAME [--json] | list | rm NAME
  cadre worker [--concurrency N]   run queued runs (with CADRE_DATABASE_URL)
  cadre migrate [--json]           bring the database up to this version's schema
  cadre workers [--json]           live workers, their slots and jobs (stuck ones flagged)
  cadre queue [--json] | retry ID | drop ID   the queue, and its dead letters
  cadre --version

Every command explains itself and all its flags: cadre COMMAND --help.
Set a model first, e.g.  export CADRE_MODEL=openai:gpt-5-mini  (see README.md).
`;

/** Sub-commands by name and the export of `./commands/<name>.ts` that runs them, loaded when used. */
export const COMMANDS: Record<string, string> = {
  ask: 'askCommand',
  chat: 'chatCommand',
  sessions: 'sessionsCommand',
  agents: 'agentsCommand',
  runs: 'runsCommand',
  docs: 'docsCommand',
  mcp: 'mcpCommand',
  serve: 'serveCommand',
  users: 'usersCommand',
  worker: 'workerCommand',
  migrate: 'migrateCommand',
  workers: 'workersCommand',
  queue: 'queueCommand',
};

/** Runs the `cadre` command line; resolves to the exit code. */
export async function main(argv: string[], overrides: Partial<CliContext> = {}): Promise<number> {
  const env = overrides.env ?? process.env;
  if (!overrides.stdout) exitQuietlyOnClosedPipe();
  const context: CliContext = {
    // Stdin is the process's only when the process is the command line; callers in code pass their own.
    ...(overrides.stdout ? {} : { stdin: process.stdin }),
    stdout: process.stdout,
    stderr: process.stderr,
    env,
    cwd: process.cwd(),
    userId: 'local',
    ...overrides,
  };
  const [name, ...args] = argv;
  try {
    if (name === '--version' || name === '-v' || name === 'version') {
      context.stdout.write(`${VERSION}\n`);
      return EXIT.ok;
    }
    if (!name || name === '--help' || name === '-h' || name === 'help') {
      (name ? context.stdout : context.stderr).write(USAGE);
      return name ? EXIT.ok : EXIT.usage;
    }
    const command = Object.hasOwn(COMMANDS, name) ? await loadCommand(name) : undefined;
    if (!command) {
      context.stderr.write(`cadre: unknown command "${name}"\n\n${USAGE}`);
      return EXIT.usage;
    }
    return await command(args, context);
  } catch (error) {
    // Loaded here, as every command loads it: through the core's entry it brings zod, which `cadre
    // --version` and `--help` do not need.
    const { HelpRequested } = await import('./command-args.ts');
    if (error instanceof HelpRequested) {
      context.stdout.write(`cadre ${name}: ${error.text}`);
      return EXIT.ok;
    }
    if (error instanceof TypeError && (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      context.stderr.write(`cadre ${name}: ${error.message}\n`);
      return EXIT.usage;
    }
    // Describing a model's failure needs the AI SDK.
    const { reportError } = await import('./errors.ts');
    return reportError(error, context.stderr);
  }
}

/**
 * Run by bin/cadre.js's wrapper (an older Node starting this one): when the wrapper is gone, even killed
 * with SIGKILL, this process stops as on SIGTERM, so `kill -9` of the pid a person started never leaves a
 * worker or a server running. The channel keeps nothing alive by itself.
 */
function stopWithWrapper(): void {
  if (!process.env.CADRE_WRAPPER_PID || !process.channel) return;
  delete process.env.CADRE_WRAPPER_PID;
  process.channel.unref();
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
}

async function loadCommand(name: string): Promise<CliCommand | undefined> {
  const module = (await import(`./commands/${name}.ts`)) as Record<string, CliCommand>;
  return module[COMMANDS[name]!];
}

if (import.meta.main) {
  stopWithWrapper();
  restartWithNodeFlags(process.argv.slice(2));
  tuneHeapForCommand(process.argv.slice(2));
  const code = await main(process.argv.slice(2));
  process.exitCode = code;
}
