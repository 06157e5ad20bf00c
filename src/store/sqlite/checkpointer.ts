import { statSync } from 'node:fs';
import { getCompileCacheDir } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Database } from './database.ts';

/** WAL pages after which the main connection checkpoints itself when the background one falls behind. */
const FALLBACK_AUTOCHECKPOINT_PAGES = 10_000;
/** SQLite's default, restored when the background checkpoints stop. */
const DEFAULT_AUTOCHECKPOINT_PAGES = 1_000;
/** A WAL grown by less than this (a quarter of SQLite's own 1,000 pages) needs no checkpoint yet. */
const DEFAULT_MIN_WAL_BYTES = 1024 * 1024;

/**
 * Background checkpoints for a file database. SQLite's automatic checkpoint runs inside whichever commit
 * crosses 1,000 WAL pages, and with `synchronous = NORMAL` it fsyncs: measured at 5–7 ms on this machine,
 * a stall of every stream on the event loop every few hundred commits. While a process is writing runs,
 * a worker thread with its own connection checkpoints instead, and the main connection's threshold is
 * raised to a fallback it only reaches if that worker falls far behind. Started once, `delayMs` or more
 * after the first write, the WAL has grown by `minWalBytes` since that write (nothing checkpoints it
 * meanwhile, so it only grows), so commands that write little (`cadre runs`, a `cadre ask` with a few
 * sub-agents) never pay for a thread: starting one and stopping it at exit costs 40–65 ms, mostly the
 * worker loading, and on a small machine its CPU is taken from the runs. The WAL is looked at when the
 * writer says it committed (`written`, at most once per `delayMs`), never on a timer: an idle process
 * looks at nothing.
 */
export class Checkpointer {
  #db: Database;
  #path: string;
  #intervalMs: number;
  #delayMs: number;
  #minWalBytes: number;
  /** The WAL's size at the first write. */
  #walAtStart = 0;
  #worker: Worker | undefined;
  /** Started, and waiting for the WAL to grow: looked at again once `#nextLook` has come. */
  #waiting = false;
  #nextLook = 0;
  readonly #now: () => number;

  /** `now`: the clock the delay is measured on (milliseconds; a test's own). */
  constructor(
    db: Database,
    path: string,
    options: { intervalMs?: number; delayMs?: number; minWalBytes?: number; now?: () => number } = {},
  ) {
    this.#db = db;
    this.#path = path;
    this.#intervalMs = options.intervalMs ?? 500;
    this.#delayMs = options.delayMs ?? 1_000;
    this.#minWalBytes = options.minWalBytes ?? DEFAULT_MIN_WAL_BYTES;
    this.#now = options.now ?? (() => performance.now());
  }

  get running(): boolean {
    return this.#worker !== undefined;
  }

  /** Starts the worker once the delay has passed and the WAL has grown (at once with `delayMs: 0`). */
  start(): void {
    if (this.#worker || this.#waiting) return;
    // The worker is on its way: until it runs, a commit crossing SQLite's default 1,000 pages would
    // checkpoint (and fsync) on the event loop, measured 10-12 ms with 20 KB tool outputs in the first second.
    this.#db.exec(`PRAGMA wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
    this.#walAtStart = this.#walBytes();
    if (this.#delayMs <= 0) {
      this.#spawn();
      return;
    }
    this.#waiting = true;
    this.#nextLook = this.#now() + this.#delayMs;
  }

  /**
   * Told by the writer after each commit: once `delayMs` has passed since the last look, looks at the
   * WAL's size (one stat) and starts the worker when it has grown enough to be worth one.
   */
  written(): void {
    if (!this.#waiting) return;
    const now = this.#now();
    if (now < this.#nextLook) return;
    this.#nextLook = now + this.#delayMs;
    if (this.#walBytes() - this.#walAtStart >= this.#minWalBytes) this.#spawn();
  }

  #walBytes(): number {
    return statSync(`${this.#path}-wal`, { throwIfNoEntry: false })?.size ?? 0;
  }

  #spawn(): void {
    this.#waiting = false;
    if (this.#worker) return;
    const compileCache = getCompileCacheDir();
    this.#worker = new Worker(new URL('./checkpoint-worker.ts', import.meta.url), {
      workerData: { path: this.#path, intervalMs: this.#intervalMs },
      // The host's compile cache: the worker's TypeScript is not stripped again (~80 ms of CPU).
      env: compileCache ? { NODE_COMPILE_CACHE: compileCache } : {},
    });
    // A worker that fails to start (no threads left) leaves checkpoints to the main connection.
    this.#worker.on('error', () => this.#fallBack());
    this.#worker.unref();
  }

  /** Stops the worker (it closes its connection) before the main connection closes. */
  async stop(): Promise<void> {
    if (this.#waiting) this.#fallBack();
    this.#waiting = false;
    const worker = this.#worker;
    if (!worker) return;
    this.#fallBack();
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage('stop');
    const timeout = setTimeout(() => void worker.terminate(), 2_000);
    await exited;
    clearTimeout(timeout);
  }

  #fallBack(): void {
    this.#worker = undefined;
    try {
      this.#db.exec(`PRAGMA wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`);
    } catch {
      // Already closed.
    }
  }
}
