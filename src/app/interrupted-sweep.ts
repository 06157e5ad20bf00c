import type { Store } from '../store/store.ts';

/** How often a process that follows trees run elsewhere closes the runs of processes that died. */
export const SWEEP_EVERY_MS = 2_000;

/**
 * Closes as `interrupted` the runs of processes that died (`markInterrupted`), off every read path: once
 * at start-up (`Cadre.create`), in workers, before the writes that need it, and, while this process follows
 * trees another process runs (a page attached to a terminal's answer, a chat list watching for answers),
 * every `SWEEP_EVERY_MS` for as long as someone holds it. A reader only reads: a tree whose process died
 * ends for it when the sweep writes that tree's closing events, which wake it like any other write.
 */
export class InterruptedSweep {
  readonly #runs: Pick<Store['runs'], 'markInterrupted'>;
  readonly #everyMs: number;
  #holders = 0;
  #timer: ReturnType<typeof setInterval> | undefined;
  #sweeping: Promise<void> | undefined;

  constructor(runs: Pick<Store['runs'], 'markInterrupted'>, everyMs = SWEEP_EVERY_MS) {
    this.#runs = runs;
    this.#everyMs = everyMs;
  }

  /** One sweep; a sweep asked while one runs joins it. A failing sweep is tried again at the next tick. */
  sweep(): Promise<void> {
    this.#sweeping ??= this.#runs
      .markInterrupted()
      .then(
        () => {},
        () => {},
      )
      .finally(() => {
        this.#sweeping = undefined;
      });
    return this.#sweeping;
  }

  /** Sweeps now and every `everyMs` until the returned release is called (each holder releases once). */
  hold(): () => void {
    this.#holders++;
    if (!this.#timer) {
      void this.sweep();
      this.#timer = setInterval(() => void this.sweep(), this.#everyMs);
      // A process that only follows must still be free to exit once its work is done.
      this.#timer.unref?.();
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.#holders === 0) {
        clearInterval(this.#timer);
        this.#timer = undefined;
      }
    };
  }

  /** Whether a timer runs now (tests: a one-shot command runs none). */
  get running(): boolean {
    return this.#timer !== undefined;
  }
}

const sweeps = new WeakMap<object, InterruptedSweep>();

/** The process's one sweep for `runs` (one per store, whichever use case asks). */
export function sweepOf(runs: Pick<Store['runs'], 'markInterrupted'>): InterruptedSweep {
  let sweep = sweeps.get(runs);
  if (!sweep) {
    sweep = new InterruptedSweep(runs);
    sweeps.set(runs, sweep);
  }
  return sweep;
}
