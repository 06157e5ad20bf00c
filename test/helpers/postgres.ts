import { type ChildProcess, spawn } from 'node:child_process';
import pg from 'pg';
import { onTestFinished } from 'vitest';
import type { Store } from '../../src/store/store.ts';
import { CLI_ENTRY, childEnv } from './cli.ts';

/** The test database CI starts (.ci/start-postgres); tests that need one skip without it. */
export const TEST_DATABASE_URL = process.env.CADRE_TEST_DATABASE_URL;

/**
 * A fresh PostgreSQL schema for one test, and the CADRE_DATABASE_URL that puts Cadre's tables (and its
 * job queue, in `<schema>_jobs`) there. Both are dropped when the test ends.
 */
export async function freshSchema(name: string): Promise<string> {
  const url = TEST_DATABASE_URL!;
  const schema = `${name}_${process.pid}_${Math.random().toString(36).slice(2, 7)}`;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`CREATE SCHEMA ${schema}`);
  await client.end();
  onTestFinished(async () => {
    const dropper = new pg.Client({ connectionString: url });
    await dropper.connect();
    await dropper.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await dropper.query(`DROP SCHEMA IF EXISTS ${schema}_jobs CASCADE`);
    await dropper.end();
  });
  const withPath = new URL(url);
  withPath.searchParams.set('options', `-c search_path=${schema}`);
  return withPath.toString();
}

/** Records a root run as started (its `run-start`, stored), as a worker running its tree would. */
export async function recordRootStart(
  store: Pick<Store, 'runs'>,
  root: { runId: string; userId: string; task: string; model?: string },
): Promise<void> {
  store.runs.record({
    runId: root.runId,
    rootRunId: root.runId,
    parentRunId: null,
    depth: 0,
    agent: 'main',
    time: Date.now(),
    seq: 0,
    type: 'run-start',
    task: root.task,
    model: root.model ?? 'm:x',
    userId: root.userId,
  });
  await store.runs.flush();
}

/** A `cadre worker` process: its output so far, and a way to wait for a line in it. */
export interface WorkerProcess {
  child: ChildProcess;
  name: string;
  output: () => string;
  /** Resolves once the worker's output matches `pattern`. */
  waitFor: (pattern: RegExp, ms?: number) => Promise<void>;
  /** SIGKILL, and resolves once the process is gone. */
  kill: () => Promise<void>;
}

/** Starts `cadre worker --name NAME ARGS` and resolves once it says it is ready; stopped when the test ends. */
export async function startWorker(
  env: Record<string, string>,
  name: string,
  args: string[] = [],
): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [CLI_ENTRY, 'worker', '--name', name, ...args], {
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const waiters = new Set<() => void>();
  const append = (chunk: Buffer) => {
    output += chunk;
    for (const waiter of waiters) waiter();
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const waitFor = (pattern: RegExp, ms = 30_000) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!pattern.test(output)) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`worker ${name} never printed ${pattern}; it printed:\n${output}`));
      }, ms);
      waiters.add(check);
      check();
    });
  const worker: WorkerProcess = {
    child,
    name,
    output: () => output,
    waitFor,
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
  await waitFor(/ready/);
  return worker;
}
