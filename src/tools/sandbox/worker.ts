/**
 * The worker thread that runs one piece of model-written JavaScript in QuickJS (WebAssembly), then is
 * terminated. It boots before it has a job, so the host can keep one warm.
 * The guest sees only what the prelude below defines: console, setTimeout (capped), help() and one async
 * function per allowed tool. Those functions post the tool's name and a JSON string to the host and get
 * a JSON string back; nothing else crosses.
 *
 * 1. Instantiate QuickJS from the host's compiled module, wait for the job, set its limits.
 * 2. Install the host functions, run the prelude (it hides them behind closures).
 * 3. Evaluate the code as a script; if that is a syntax error (top-level return/await), as an async body
 *    (its final expression returned, as a script's would be).
 * 4. Pump jobs after every tool result and timer until the value settles, then post it as JSON.
 */
import { parentPort, workerData } from 'node:worker_threads';
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSContext,
  type QuickJSDeferredPromise,
  type QuickJSHandle,
  RELEASE_SYNC,
} from 'quickjs-emscripten';
import type { GuestOutcome, HostMessage, WorkerBoot, WorkerJob, WorkerMessage } from './protocol.ts';

const boot = workerData as WorkerBoot;
const port = parentPort!;

let consoleText = '';
let droppedConsoleChars = 0;
let finished = false;
let toolCalls = 0;
let nextCallId = 0;
const pendingCalls = new Map<number, QuickJSDeferredPromise>();
let pendingTimers = 0;
let timersStarted = 0;

function finish(message: GuestOutcome) {
  if (finished) return;
  finished = true;
  port.postMessage({ type: 'done', ...message, console: consoleText, droppedConsoleChars } as WorkerMessage);
}

// 1.
// QuickJS's own malloc limit cannot see block sizes in this build (it counts only large single requests),
// so the WebAssembly memory itself is capped: the whole guest heap cannot grow past it.
const WASM_PAGE = 64 * 1024;
const wasmMemory = new WebAssembly.Memory({
  initial: 256,
  maximum: Math.max(256, Math.ceil((boot.memoryBytes + 16 * 1024 * 1024) / WASM_PAGE)),
});
const quickjs = await newQuickJSWASMModuleFromVariant(
  newVariant(RELEASE_SYNC, { wasmModule: boot.wasmModule, wasmMemory }),
);
const runtime = quickjs.newRuntime();
const vm = runtime.newContext();
port.postMessage({ type: 'ready' } satisfies WorkerMessage);
// A warm worker waits here, QuickJS ready, until the host hands it a job.
const job = await new Promise<WorkerJob>((resolve) =>
  port.once('message', (message: HostMessage) => {
    if (message.type === 'job') resolve(message.job);
  }),
);
const { limits } = job;
const deadline = Date.now() + limits.timeMs;
runtime.setMemoryLimit(limits.memoryBytes);
runtime.setMaxStackSize(limits.stackBytes);
if (job.guestInterrupt) runtime.setInterruptHandler(() => Date.now() > deadline);
setTimeout(
  () => finish({ ok: false, error: `time limit: the code ran past ${limits.timeMs} ms` }),
  limits.timeMs + 5,
).unref();

// 2.
const logFn = vm.newFunction('log', (levelHandle, textHandle) => {
  const level = vm.getString(levelHandle);
  const text = vm.getString(textHandle);
  const line = `${level === 'log' || level === 'info' ? '' : `[${level}] `}${text}\n`;
  const room = limits.maxConsoleChars - consoleText.length;
  if (room >= line.length) consoleText += line;
  else {
    if (room > 0) consoleText += line.slice(0, room);
    droppedConsoleChars += line.length - Math.max(room, 0);
  }
});
const callFn = vm.newFunction('call', (nameHandle, inputHandle) => {
  const name = vm.getString(nameHandle);
  const input = vm.getString(inputHandle);
  if (++toolCalls > limits.maxToolCalls) {
    throw new Error(`too many tool calls: at most ${limits.maxToolCalls} per run_js`);
  }
  const deferred = vm.newPromise();
  const id = nextCallId++;
  pendingCalls.set(id, deferred);
  port.postMessage({ type: 'call', id, name, input } satisfies WorkerMessage);
  return deferred.handle;
});
const timerFn = vm.newFunction('timer', (callbackHandle, delayHandle) => {
  if (pendingTimers >= limits.maxPendingTimers || timersStarted >= limits.maxTimers) {
    throw new Error(
      `too many timers: at most ${limits.maxPendingTimers} waiting and ${limits.maxTimers} in all`,
    );
  }
  if (vm.typeof(callbackHandle) !== 'function') throw new TypeError('setTimeout needs a function');
  const delay = Math.max(0, Math.min(vm.getNumber(delayHandle) || 0, deadline - Date.now()));
  const callback = callbackHandle.dup();
  pendingTimers++;
  timersStarted++;
  setTimeout(() => {
    pendingTimers--;
    if (finished) return;
    const result = vm.callFunction(callback, vm.undefined);
    callback.dispose();
    if (result.error) {
      appendError('uncaught error in a timer', result.error);
      result.error.dispose();
    } else result.value.dispose();
    pump();
  }, delay);
  return vm.undefined;
});

const hostFunctions = vm.newObject();
vm.setProp(hostFunctions, 'log', logFn);
vm.setProp(hostFunctions, 'call', callFn);
vm.setProp(hostFunctions, 'timer', timerFn);
vm.setProp(vm.global, '__cadre', hostFunctions);
const prelude = vm.evalCode(
  `(() => {
  const host = globalThis.__cadre;
  delete globalThis.__cadre;
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const format = (value) => {
    if (typeof value === 'string') return value;
    if (value instanceof Error) return String(value);
    try { const text = stringify(value); return text === undefined ? String(value) : text; } catch { return String(value); }
  };
  const console = {};
  for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
    console[level] = (...args) => { host.log(level, args.map(format).join(' ')); };
  }
  globalThis.console = console;
  globalThis.setTimeout = (callback, ms) => { host.timer(callback, Number(ms) || 0); };
  const help = parse(${JSON.stringify(job.toolHelp)});
  globalThis.help = () => parse(stringify(help));
  const tools = {};
  for (const name of parse(${JSON.stringify(JSON.stringify(job.toolNames))})) {
    tools[name] = async (input = {}) => parse(await host.call(name, stringify(input ?? {})));
    globalThis[name] = tools[name];
  }
  globalThis.tools = tools;
  return (value) => value === undefined ? undefined : stringify(value);
})()`,
  'cadre-prelude.js',
);
if (prelude.error) throw new Error(`sandbox prelude failed: ${JSON.stringify(vm.dump(prelude.error))}`);
const serialize = prelude.value;

port.on('message', (message: HostMessage) => {
  if (message.type !== 'result') return;
  const deferred = pendingCalls.get(message.id);
  if (!deferred || finished) return;
  pendingCalls.delete(message.id);
  if (message.ok) {
    const value = vm.newString(message.value);
    deferred.resolve(value);
    value.dispose();
  } else {
    const error = vm.newError(message.error);
    deferred.reject(error);
    error.dispose();
  }
  pump();
});

// 3.
let evaluated = vm.evalCode(job.code, 'cadre.js');
if (evaluated.error && isSyntaxError(vm, evaluated.error)) {
  evaluated.error.dispose();
  evaluated = vm.evalCode(`(async () => {\n${asyncBody(job.code, job.returningCode)}\n})()`, 'cadre.js');
}
let main: QuickJSHandle | undefined;
if (evaluated.error) {
  fail(evaluated.error);
} else {
  main = evaluated.value;
  pump();
}

// 4.
function pump() {
  if (finished || !main) return;
  const jobs = runtime.executePendingJobs();
  if (jobs.error) {
    if (Date.now() > deadline) return finish({ ok: false, error: timeLimitMessage() });
    appendError('uncaught error in a promise job', jobs.error);
    jobs.error.dispose();
  }
  if (Date.now() > deadline) return finish({ ok: false, error: timeLimitMessage() });
  const state = vm.getPromiseState(main);
  if (state.type === 'pending') {
    if (pendingCalls.size === 0 && pendingTimers === 0) {
      finish({
        ok: false,
        error: 'the returned promise never settles: nothing it could wait for is pending',
      });
    }
    return;
  }
  if (state.type === 'rejected') return fail(state.error);
  const serialized = vm.callFunction(serialize, vm.undefined, state.value);
  if (serialized.error) return fail(serialized.error, 'the return value is not JSON-serialisable: ');
  const handle = serialized.value;
  if (vm.typeof(handle) === 'undefined') return finish({ ok: true, value: null });
  const length = vm.getNumber(vm.getProp(handle, 'length'));
  if (length > limits.maxResultChars) {
    return finish({
      ok: false,
      error: `the return value is ${length} characters of JSON; the limit is ${limits.maxResultChars}`,
    });
  }
  finish({ ok: true, value: vm.getString(handle) });
}

function fail(errorHandle: QuickJSHandle, prefix = '') {
  if (Date.now() > deadline) return finish({ ok: false, error: timeLimitMessage() });
  finish({ ok: false, error: prefix + describeGuestError(vm, errorHandle) });
}

function appendError(what: string, errorHandle: QuickJSHandle): void {
  const line = `[error] ${what}: ${describeGuestError(vm, errorHandle)}\n`;
  if (consoleText.length + line.length <= limits.maxConsoleChars) consoleText += line;
}

function timeLimitMessage(): string {
  return `time limit: the code ran past ${limits.timeMs} ms and was interrupted`;
}

/**
 * The code as an async function body whose final expression, if it ends with one, is returned (a script's
 * completion value would be; an async body drops it). Kept as written when the rewrite does not compile.
 */
function asyncBody(code: string, returning: string | undefined): string {
  if (returning === undefined) return code;
  const compiled = vm.evalCode(`(async () => {\n${returning}\n})`, 'cadre.js', { compileOnly: true });
  if (compiled.error) {
    compiled.error.dispose();
    return code;
  }
  compiled.value.dispose();
  return returning;
}

function isSyntaxError(context: QuickJSContext, errorHandle: QuickJSHandle): boolean {
  const name = context.getProp(errorHandle, 'name');
  const isSyntax = context.typeof(name) === 'string' && context.getString(name) === 'SyntaxError';
  name.dispose();
  return isSyntax;
}

/** "Name: message" of a guest error, read as plain strings (never the guest's own toString). */
function describeGuestError(context: QuickJSContext, errorHandle: QuickJSHandle): string {
  const dumped = context.dump(errorHandle) as unknown;
  if (dumped && typeof dumped === 'object') {
    const { name, message } = dumped as { name?: unknown; message?: unknown };
    if (typeof message === 'string') {
      const text = `${typeof name === 'string' ? name : 'Error'}: ${message}`;
      return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
    }
  }
  const text = typeof dumped === 'string' ? dumped : (JSON.stringify(dumped) ?? String(dumped));
  return `thrown: ${text.slice(0, 2000)}`;
}
