import { readFile } from 'node:fs/promises';
import { createRequire, getCompileCacheDir } from 'node:module';
import { Worker } from 'node:worker_threads';
import { ModelBehaviorError, UserError } from '../../core/errors.ts';
import { returnFinalExpression } from './final-expression.ts';
import {
  DEFAULT_SANDBOX_LIMITS,
  type HostMessage,
  type SandboxLimits,
  type WorkerBoot,
  type WorkerJob,
  type WorkerMessage,
} from './protocol.ts';

/** Extra time the guest gets past its own limit before the host kills the worker outright. */
const WATCHDOG_GRACE_MS = 1_000;
const MAX_TOOL_RESULT_CHARS = 1_000_000;
/** Characters of JSON one tool-call input from inside may have (a vault value is at most 256 KiB). */
const MAX_TOOL_INPUT_CHARS = 300_000;
/**
 * Deepest nesting of arrays and objects in a value leaving the guest. Host code serialises such values
 * with the recursive JSON.stringify (events, the store, model messages), which throws past a few thousand
 * levels, outside any handler when the store flushes.
 */
const MAX_JSON_DEPTH = 100;

export interface SandboxRequest {
  code: string;
  /** Functions the guest may call, by name; each takes one JSON object. */
  toolNames: string[];
  /** What `help()` returns inside: name, description and input schema per tool. */
  toolHelp?: unknown[];
  /** Runs one tool for the guest and returns its JSON-able output; throws for a failed call. */
  callTool: (name: string, input: unknown) => Promise<unknown>;
  limits?: Partial<SandboxLimits>;
  signal?: AbortSignal;
  /** Tests only: leave the guest without an interrupt so only the host watchdog can stop it. */
  guestInterrupt?: boolean;
}

type SandboxOutcome = ({ ok: true; value: unknown } | { ok: false; error: string }) & {
  console: string;
  droppedConsoleChars: number;
};

export type SandboxResult = SandboxOutcome & { ms: number };

let compiled: Promise<WebAssembly.Module> | undefined;
/** One booted worker kept ready for the next call (QuickJS already instantiated), for the default memory. */
let spare: { worker: Worker; memoryBytes: number; alive: boolean; ready: Promise<void> } | undefined;

/** The QuickJS WebAssembly module, compiled once per process and handed to every worker. */
export function quickJsModule(): Promise<WebAssembly.Module> {
  compiled ??= (async () => {
    const require = createRequire(import.meta.url);
    const bytes = await readFile(require.resolve('@jitl/quickjs-wasmfile-release-sync/wasm'));
    return WebAssembly.compile(bytes);
  })();
  return compiled;
}

function bootWorker(wasmModule: WebAssembly.Module, memoryBytes: number): Worker {
  const boot: WorkerBoot = { wasmModule, memoryBytes };
  const compileCache = getCompileCacheDir();
  return new Worker(new URL('./worker.ts', import.meta.url), {
    workerData: boot,
    // The host's compile cache: the worker's TypeScript is not stripped again (~80 ms of CPU per boot).
    env: compileCache ? { NODE_COMPILE_CACHE: compileCache } : {},
    argv: [],
    execArgv: [],
    stdout: true,
    stderr: true,
    resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 },
  });
}

/**
 * A booted worker for this memory size: the warm spare when it fits, else a new one. Every worker runs
 * one job only; a new spare is booted in the background for the next call.
 */
async function takeWorker(memoryBytes: number): Promise<Worker> {
  const wasmModule = await quickJsModule();
  let worker: Worker;
  if (spare?.alive && spare.memoryBytes === memoryBytes) worker = spare.worker;
  else worker = bootWorker(wasmModule, memoryBytes);
  spare = undefined;
  if (memoryBytes === DEFAULT_SANDBOX_LIMITS.memoryBytes) {
    const worker = bootWorker(wasmModule, memoryBytes);
    const next = {
      worker,
      memoryBytes,
      alive: true,
      ready: new Promise<void>((resolve) => {
        worker.once('message', () => resolve());
        worker.once('exit', () => resolve());
      }),
    };
    // An idle spare never keeps the process alive, and one that dies is simply not used.
    worker.unref();
    worker.once('exit', () => {
      next.alive = false;
    });
    worker.once('error', () => {
      next.alive = false;
    });
    spare = next;
  }
  return worker;
}

/** Resolves once the warm spare worker (if any) has QuickJS instantiated; for benchmarks and pre-warming. */
export async function sandboxWarm(): Promise<void> {
  if (!spare) await takeWorker(DEFAULT_SANDBOX_LIMITS.memoryBytes).then((worker) => worker.terminate());
  const waiting = spare;
  if (!waiting) return;
  // Held while waiting, so the wait itself keeps the process alive; idle again afterwards.
  waiting.worker.ref();
  await waiting.ready;
  if (spare === waiting) waiting.worker.unref();
}

/**
 * Runs JavaScript in a fresh QuickJS instance inside a fresh worker thread, with explicit memory, stack
 * and time limits, and a watchdog that terminates the worker if the guest overruns anyway. Never throws
 * for what the guest does: errors, limits and kills come back as `{ok: false}`.
 */
export async function runSandboxed(request: SandboxRequest): Promise<SandboxResult> {
  const limits = { ...DEFAULT_SANDBOX_LIMITS, ...request.limits };
  if (limits.stackBytes > 256 * 1024)
    throw new UserError('config_invalid', 'the sandbox stack limit may not exceed 256 KiB');
  const started = performance.now();
  const job: WorkerJob = {
    code: request.code,
    ...withReturningCode(request.code),
    toolNames: request.toolNames,
    toolHelp: JSON.stringify(request.toolHelp ?? []),
    limits,
    guestInterrupt: request.guestInterrupt ?? true,
  };
  const worker = await takeWorker(limits.memoryBytes);
  worker.ref();
  worker.postMessage({ type: 'job', job } satisfies HostMessage);
  const ms = () => Math.round(performance.now() - started);

  return new Promise<SandboxResult>((resolve) => {
    let settled = false;
    const settle = (result: SandboxOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(watchdog);
      request.signal?.removeEventListener('abort', onAbort);
      void worker.terminate();
      resolve({ ...result, ms: ms() });
    };
    const kill = (error: string) => settle({ ok: false, error, console: '', droppedConsoleChars: 0 });
    const watchdog = setTimeout(
      () => kill(`time limit: the code ran past ${limits.timeMs} ms and its worker was terminated`),
      limits.timeMs + WATCHDOG_GRACE_MS,
    );
    const onAbort = () => kill('cancelled: the run was stopped');
    if (request.signal?.aborted) return onAbort();
    request.signal?.addEventListener('abort', onAbort, { once: true });

    worker.on('message', (message: WorkerMessage) => {
      if (message.type === 'ready') return;
      if (message.type === 'call') {
        void answerCall(worker, request, message);
        return;
      }
      const { type: _type, ...done } = message;
      if (!done.ok) return settle(done);
      const depth = done.value === null ? 0 : jsonDepth(done.value);
      if (depth > MAX_JSON_DEPTH) {
        const error = `the return value nests ${depth} levels deep; the limit is ${MAX_JSON_DEPTH}`;
        const { console, droppedConsoleChars } = done;
        return settle({ ok: false, error, console, droppedConsoleChars });
      }
      settle({ ...done, value: done.value === null ? null : JSON.parse(done.value) });
    });
    worker.on('error', (error) => kill(`the sandbox failed: ${error.message}`));
    worker.on('exit', (code) => kill(`the sandbox stopped unexpectedly (exit code ${code})`));
  });
}

async function answerCall(
  worker: Worker,
  request: SandboxRequest,
  call: Extract<WorkerMessage, { type: 'call' }>,
) {
  let reply: HostMessage;
  try {
    if (!request.toolNames.includes(call.name))
      throw new ModelBehaviorError('tool_input', `no tool named "${call.name}" is available here`);
    if (call.input.length > MAX_TOOL_INPUT_CHARS) {
      throw new ModelBehaviorError(
        'tool_input',
        `the ${call.name} input is ${call.input.length} characters of JSON; the limit inside run_js is ${MAX_TOOL_INPUT_CHARS}`,
      );
    }
    const depth = jsonDepth(call.input);
    if (depth > MAX_JSON_DEPTH) {
      throw new ModelBehaviorError(
        'tool_input',
        `the ${call.name} input nests ${depth} levels deep; the limit is ${MAX_JSON_DEPTH}`,
      );
    }
    const output = await request.callTool(call.name, JSON.parse(call.input));
    const value = JSON.stringify(output ?? null);
    if (value.length > MAX_TOOL_RESULT_CHARS) {
      throw new ModelBehaviorError(
        'tool_input',
        `${call.name} returned ${value.length} characters of JSON; the limit inside run_js is ${MAX_TOOL_RESULT_CHARS}`,
      );
    }
    reply = { type: 'result', id: call.id, ok: true, value };
  } catch (error) {
    reply = {
      type: 'result',
      id: call.id,
      ok: false,
      error: error instanceof Error ? error.message : String(error),
    };
  }
  try {
    worker.postMessage(reply);
  } catch {
    // The worker was already terminated (limit, cancellation); the answer has nowhere to go.
  }
}

/** How deeply a JSON text nests arrays and objects, found by one scan of it (no parse, no recursion). */
export function jsonDepth(json: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < json.length; index++) {
    const code = json.charCodeAt(index);
    if (inString) {
      if (code === 0x5c) index++;
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x5b || code === 0x7b) deepest = Math.max(deepest, ++depth);
    else if (code === 0x5d || code === 0x7d) depth--;
  }
  return deepest;
}

function withReturningCode(code: string): { returningCode?: string } {
  const returningCode = returnFinalExpression(code);
  return returningCode === undefined ? {} : { returningCode };
}
