/**
 * Messages between the run_js host and its worker. Everything that crosses is a string of JSON or a
 * plain number: no host object or function is ever handed to the guest.
 */
export interface SandboxLimits {
  /** QuickJS heap limit, bytes. */
  memoryBytes: number;
  /** QuickJS stack limit, bytes; at most 256 KiB so deep recursion fails inside the guest, not the host. */
  stackBytes: number;
  /** Wall-clock limit for one run, ms; the guest is interrupted at it and the worker killed shortly after. */
  timeMs: number;
  /** Characters of console output kept; the rest is counted and dropped. */
  maxConsoleChars: number;
  /** Characters of the JSON return value. */
  maxResultChars: number;
  /** Tool calls one run may make from inside the sandbox. */
  maxToolCalls: number;
  /** setTimeout callbacks waiting at once, and in total. */
  maxPendingTimers: number;
  maxTimers: number;
}

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = {
  memoryBytes: 64 * 1024 * 1024,
  stackBytes: 256 * 1024,
  timeMs: 30_000,
  maxConsoleChars: 8_000,
  maxResultChars: 1_000_000,
  maxToolCalls: 100,
  maxPendingTimers: 16,
  maxTimers: 256,
};

/** What a worker is started with, before it has a job. */
export interface WorkerBoot {
  wasmModule: WebAssembly.Module;
  /** Sizes the WebAssembly memory; a job's memory limit must be the same. */
  memoryBytes: number;
}

export interface WorkerJob {
  code: string;
  /**
   * The code as an async body with its final expression returned (final-expression.ts), computed on the
   * host so the worker loads nothing more; the worker uses it when it compiles.
   */
  returningCode?: string;
  toolNames: string[];
  /** JSON of `[{name, description, input}]`, what `help()` returns inside. */
  toolHelp: string;
  limits: SandboxLimits;
  /** Only tests turn this off, to prove the host watchdog alone still stops a runaway guest. */
  guestInterrupt: boolean;
}

/** How the guest's code ended: its return value as JSON (null for undefined), or an error message. */
export type GuestOutcome = { ok: true; value: string | null } | { ok: false; error: string };

export type WorkerMessage =
  | { type: 'ready' }
  | { type: 'call'; id: number; name: string; input: string }
  | (GuestOutcome & { type: 'done'; console: string; droppedConsoleChars: number });

export type HostMessage =
  | { type: 'job'; job: WorkerJob }
  | { type: 'result'; id: number; ok: true; value: string }
  | { type: 'result'; id: number; ok: false; error: string };
