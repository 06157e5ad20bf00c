import type { ChildProcess } from 'node:child_process';
import { type CliResult, runCli } from './cli.ts';

/** A `cadre serve` child process: its URL once listening, and how it ended. */
export interface ServeProcess {
  url: string;
  child: ChildProcess;
  /** Everything it printed so far. */
  output: () => string;
  exited: Promise<CliResult>;
}

/** Starts `cadre serve ARGS` as a person would and waits for its "Cadre listening on" line. */
export async function startServe(args: string[], env: Record<string, string>): Promise<ServeProcess> {
  let child: ChildProcess | undefined;
  let stdout = '';
  const exited = runCli(['serve', ...args], env, {
    onSpawn: (spawned) => {
      child = spawned;
      spawned.stdout!.on('data', (chunk) => {
        stdout += chunk;
      });
    },
  });
  const url = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const first = stdout.split('\n')[0] ?? '';
      const match = /^Cadre listening on (http:\/\/\S+)$/.exec(first);
      if (match && stdout.includes('\n')) resolve(match[1]!);
    };
    child!.stdout!.on('data', check);
    exited.then((result) =>
      reject(
        new Error(`cadre serve exited (${result.code}) before listening:\n${result.stdout}${result.stderr}`),
      ),
    );
  });
  return { url, child: child!, output: () => stdout, exited };
}
