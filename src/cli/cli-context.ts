import type { Database } from '../store/database.ts';

/** What every `cadre` sub-command gets: where to write, the store, and who is asking. */
export interface CliContext {
  /** Read by `cadre mcp` (the protocol) and `cadre chat`; defaults to `process.stdin`. */
  stdin?: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: Record<string, string | undefined>;
  /** Opens the store at $CADRE_HOME/cadre.db on first use. */
  db: () => Database;
  userId: string;
  cwd: string;
}

/** A sub-command: its arguments after the command name(s); resolves to the process exit code. */
export type CliCommand = (args: string[], context: CliContext) => Promise<number>;
