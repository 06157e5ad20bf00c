import type { Store } from '../app/create-cadre.ts';
import { Cadre, type CadreOptions } from '../app/create-cadre.ts';

/** What every `cadre` sub-command gets: where to write, who is asking, and how to open Cadre. */
export interface CliContext {
  /** Read by `cadre mcp` (the protocol) and `cadre ask` (a piped question); `process.stdin` when main runs as the command line. */
  stdin?: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  env: Record<string, string | undefined>;
  /** A store to use instead of `$CADRE_HOME/cadre.db` (tests pass an in-memory one). */
  store?: Store;
  userId: string;
  cwd: string;
}

/** A sub-command: its arguments after the command name(s); resolves to the process exit code. */
export type CliCommand = (args: string[], context: CliContext) => Promise<number>;

/** Opens Cadre for one command, from the context and the command's own flags. */
export function openCadre(
  context: CliContext,
  flags: {
    config?: string | undefined;
    model?: string | undefined;
    workspace?: string | undefined;
    /** Only stored data is needed: tools and agents load if and when a use case needs them. */
    lazy?: boolean;
    /** `--no-worker`: with runs as jobs, this process runs none of them. */
    'no-worker'?: boolean | undefined;
  } = {},
): Promise<Cadre> {
  const options: CadreOptions = {
    env: context.env,
    cwd: context.cwd,
    ...(context.store ? { store: context.store } : {}),
    ...(flags.config ? { configFile: flags.config } : {}),
    ...(flags.model ? { flags: { model: flags.model } } : {}),
    ...(flags.workspace ? { workspace: flags.workspace } : {}),
    ...(flags.lazy ? { lazy: true } : {}),
    ...(flags['no-worker'] ? { worker: false } : {}),
  };
  return Cadre.create(options);
}
