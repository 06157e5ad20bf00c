import { getCompileCacheDir } from 'node:module';
import { Worker } from 'node:worker_threads';
import { ModelBehaviorError, SystemError } from '../../core/errors.ts';
import { Semaphore } from '../../core/semaphore.ts';
import type { MathJob, MathReply } from './math-worker.ts';

/** The bounds on one `calculate` evaluation. */
export interface MathLimits {
  /** Wall-clock time one expression may take; the worker is terminated past it. */
  timeoutMs: number;
  /** The worker's V8 heap (old generation), in megabytes: mathjs matrices are plain arrays on it. */
  memoryMb: number;
  /** Longest formatted result handed back. */
  maxResultChars: number;
}

export const DEFAULT_MATH_LIMITS: MathLimits = { timeoutMs: 5_000, memoryMb: 256, maxResultChars: 100_000 };

/** Booting a worker loads mathjs (most of a second on a slow machine); that is not the expression's time. */
const BOOT_TIMEOUT_MS = 30_000;
/**
 * Evaluations at once (each in its own worker); more wait their turn. Each worker can use its whole heap,
 * and booting one costs a core for most of a second, so a step with many calls must not start many.
 */
const MAX_WORKERS = 2;
/** Idle workers kept for the next calls. */
const MAX_IDLE_WORKERS = MAX_WORKERS;
const slots = new Semaphore(MAX_WORKERS);

interface PooledWorker {
  worker: Worker;
  memoryMb: number;
  ready: Promise<void>;
  /** True once `ready` has resolved: mathjs is loaded. */
  booted: boolean;
}

const idle: PooledWorker[] = [];
let nextJobId = 0;

function boot(memoryMb: number): PooledWorker {
  const compileCache = getCompileCacheDir();
  const worker = new Worker(new URL('./math-worker.ts', import.meta.url), {
    // The host's compile cache, from the worker's first module on: its TypeScript is not stripped again
    // (which boots Node's type stripper, ~80 ms of CPU) and mathjs is not compiled again.
    env: compileCache ? { NODE_COMPILE_CACHE: compileCache } : {},
    argv: [],
    execArgv: [],
    stdout: true,
    stderr: true,
    resourceLimits: { maxOldGenerationSizeMb: memoryMb, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 },
  });
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      void worker.terminate();
      reject(new SystemError('calculator_boot', 'the calculator did not start in time'));
    }, BOOT_TIMEOUT_MS);
    // A spare booting in the background must not hold a finished command open.
    timer.unref();
    worker.once('message', () => {
      clearTimeout(timer);
      resolve();
    });
    worker.once('error', (error) => {
      clearTimeout(timer);
      reject(
        new SystemError('calculator_boot', `the calculator failed to start: ${error.message}`, {}, error),
      );
    });
  });
  // A failed boot is reported to whoever awaits `ready`; an unawaited spare must not crash the process.
  ready.catch(() => undefined);
  const pooled: PooledWorker = { worker, memoryMb, ready, booted: false };
  ready.then(
    () => {
      pooled.booted = true;
    },
    () => undefined,
  );
  worker.once('exit', () => {
    const index = idle.indexOf(pooled);
    if (index !== -1) idle.splice(index, 1);
  });
  return pooled;
}

/** Jobs that found no idle worker and booted one: the first worker given back meanwhile is theirs. */
interface Waiter {
  memoryMb: number;
  handed?: PooledWorker;
  resolve: (pooled: PooledWorker) => void;
}
const waiting: Waiter[] = [];

/**
 * A worker for one job: an idle one that has booted, or else whichever is ready first of one booting (an
 * idle one still booting, or a new one) and one that another job gives back meanwhile (an evaluation
 * takes milliseconds, a boot hundreds: four calls at once should not wait for a second boot when the
 * first worker is free again). The one not taken waits idle.
 */
async function acquireWorker(memoryMb: number): Promise<PooledWorker> {
  const booted = idle.findIndex((pooled) => pooled.memoryMb === memoryMb && pooled.booted);
  if (booted !== -1) return ready(idle.splice(booted, 1)[0]!);
  const booting = idle.findIndex((pooled) => pooled.memoryMb === memoryMb);
  const fresh = booting === -1 ? boot(memoryMb) : idle.splice(booting, 1)[0]!;
  fresh.worker.ref();
  const waiter: Waiter = { memoryMb, resolve: () => {} };
  const givenBack = new Promise<PooledWorker>((resolve) => {
    waiter.resolve = resolve;
  });
  waiting.push(waiter);
  let first: PooledWorker;
  try {
    first = await Promise.race([fresh.ready.then(() => fresh), givenBack]);
  } catch (error) {
    // The new worker failed to boot: a worker handed over meanwhile goes back to the pool.
    if (waiter.handed) giveBack(waiter.handed);
    void fresh.worker.terminate();
    throw error;
  } finally {
    const at = waiting.indexOf(waiter);
    if (at !== -1) waiting.splice(at, 1);
  }
  if (first === fresh) {
    if (waiter.handed) giveBack(waiter.handed);
    return fresh;
  }
  giveBack(fresh);
  return ready(first);
}

/** `pooled` once it has booted, held open for its job; a failed boot is terminated and thrown. */
async function ready(pooled: PooledWorker): Promise<PooledWorker> {
  pooled.worker.ref();
  try {
    await pooled.ready;
  } catch (error) {
    void pooled.worker.terminate();
    throw error;
  }
  return pooled;
}

function giveBack(pooled: PooledWorker): void {
  const waiter = waiting.find((one) => one.memoryMb === pooled.memoryMb && !one.handed);
  if (waiter) {
    waiter.handed = pooled;
    waiter.resolve(pooled);
    return;
  }
  // The pool keeps the workers used last: past its size, the longest idle goes.
  if (idle.length >= MAX_IDLE_WORKERS) void idle.shift()?.worker.terminate();
  // An idle worker never keeps the process alive.
  pooled.worker.unref();
  idle.push(pooled);
}

/** How many workers with this heap wait idle (booted or booting) for the next evaluation: for tests. */
export function idleMathWorkers(memoryMb = DEFAULT_MATH_LIMITS.memoryMb): number {
  return idle.filter((spare) => spare.memoryMb === memoryMb).length;
}

/**
 * Boots a worker in the background, unless one is idle or booting already, so the first evaluation finds
 * mathjs loaded. It waits idle (never holding the process open) and counts against the idle pool.
 */
export function warmMathWorker(limits: Partial<MathLimits> = {}): void {
  const memoryMb = limits.memoryMb ?? DEFAULT_MATH_LIMITS.memoryMb;
  if (idle.some((spare) => spare.memoryMb === memoryMb)) return;
  giveBack(boot(memoryMb));
}

/**
 * Evaluates one mathjs expression in a pooled worker thread with a capped heap and a time limit. An
 * expression that runs out of either gets a clear error saying which limit it hit (the worker is
 * terminated and replaced); the process and the run go on. `signal` ends the evaluation early.
 */
export async function evaluateInWorker(
  expression: string,
  options: { limits?: Partial<MathLimits>; signal?: AbortSignal } = {},
): Promise<string> {
  const release = await slots.acquire(options.signal);
  try {
    return await evaluateInSlot(expression, { ...DEFAULT_MATH_LIMITS, ...options.limits }, options.signal);
  } finally {
    release();
  }
}

async function evaluateInSlot(expression: string, limits: MathLimits, signal: AbortSignal | undefined) {
  const options = { signal };
  const pooled = await acquireWorker(limits.memoryMb);
  // Cancelled while a worker booted: the listener below would never hear it.
  if (signal?.aborted) {
    giveBack(pooled);
    throw signal.reason ?? new Error('aborted');
  }
  const { worker } = pooled;
  const job: MathJob = { id: ++nextJobId, expression, maxResultChars: limits.maxResultChars };
  return new Promise<string>((resolve, reject) => {
    let settled = false;
    const finish = (reusable: boolean, action: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      if (reusable) giveBack(pooled);
      else {
        void worker.terminate();
        // The next calculation should not pay for booting mathjs again because this one was hostile.
        if (!idle.some((spare) => spare.memoryMb === limits.memoryMb)) giveBack(boot(limits.memoryMb));
      }
      action();
    };
    const onMessage = (reply: MathReply) => {
      if (!('id' in reply) || reply.id !== job.id) return;
      finish(true, () =>
        reply.ok ? resolve(reply.result) : reject(new ModelBehaviorError('calculation_failed', reply.error)),
      );
    };
    const onError = (error: Error & { code?: string }) =>
      finish(false, () =>
        reject(
          error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? new ModelBehaviorError(
                'calculation_memory',
                `"${expression}" needs more than the calculator's ${limits.memoryMb} MB of memory and was stopped; use smaller matrices or compute the figure in parts`,
                { limit: 'memoryMb', memoryMb: limits.memoryMb },
              )
            : new SystemError(
                'calculation_crashed',
                `the calculator failed on "${expression}": ${error.message}`,
                {},
                error,
              ),
        ),
      );
    const onExit = (code: number) =>
      finish(false, () =>
        reject(
          new SystemError(
            'calculation_crashed',
            `the calculator stopped (exit code ${code}) on "${expression}"`,
          ),
        ),
      );
    const onAbort = () => finish(false, () => reject(options.signal?.reason ?? new Error('aborted')));
    const timer = setTimeout(
      () =>
        finish(false, () =>
          reject(
            new ModelBehaviorError(
              'calculation_timeout',
              `"${expression}" took longer than the calculator's limit of ${limits.timeoutMs / 1000} s and was stopped; use smaller inputs`,
              { limit: 'timeoutMs', timeoutMs: limits.timeoutMs },
            ),
          ),
        ),
      limits.timeoutMs,
    );
    worker.on('message', onMessage);
    worker.once('error', onError);
    worker.once('exit', onExit);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    worker.postMessage(job);
  });
}
