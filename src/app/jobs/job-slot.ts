import type { Semaphore } from '../../core/semaphore.ts';

/**
 * One job's hold on a worker's slots. The job gives its slot back while any of its calls waits on a child
 * job and takes one again once none does. However many calls start and end their waits, and in whatever
 * order, the job asks for at most one slot at a time and holds at most one: a resumed parent whose calls
 * find their children already ended must not queue a second request behind the slot it holds itself
 * (with one slot, that request would wait for ever). Taking a slot again gives way to the job's stop: a
 * stopped job unwinds without one.
 */
export class JobSlot {
  #slots: Semaphore;
  #held: (() => void) | undefined;
  #taking: Promise<void> | undefined;
  #waits = 0;
  #ended = false;

  /** A job that holds `release`, its slot taken from `slots`. */
  constructor(slots: Semaphore, release: () => void) {
    this.#slots = slots;
    this.#held = release;
  }

  /** Whether the job holds a slot now. */
  get held(): boolean {
    return this.#held !== undefined;
  }

  /** Calls of the job waiting on children now. */
  get waits(): number {
    return this.#waits;
  }

  /** A call begins to wait on a child: the first one gives the job's slot back. */
  beginWait(): void {
    this.#waits++;
    if (this.#waits === 1) this.giveBack();
  }

  /**
   * A call's wait has ended: when it was the last one, resolves once the job holds a slot again (one
   * request for all the calls that end meanwhile), or at once, holding none, when `signal` aborts first.
   */
  async endWait(signal: AbortSignal): Promise<void> {
    this.#waits = Math.max(0, this.#waits - 1);
    if (this.#waits > 0 || this.#held) return;
    this.#taking ??= this.#slots.acquire(signal).then(
      (release) => {
        this.#taking = undefined;
        // Another call began to wait meanwhile (the job holds nothing while it waits), or the job is over.
        if (this.#waits > 0 || this.#ended) release();
        else this.#held = release;
      },
      () => {
        // Stopped first: the run unwinds without a slot (it only records how its calls ended, the
        // children's envelopes included), rather than failing its call with the stop's reason.
        this.#taking = undefined;
      },
    );
    return this.#taking;
  }

  /** A call's wait has ended with the job handed over: it takes no slot again. */
  leaveWait(): void {
    this.#waits = Math.max(0, this.#waits - 1);
  }

  /** The job is over: its slot goes back, and one still being asked for goes back as it comes. */
  end(): void {
    this.#ended = true;
    this.giveBack();
  }

  /** Gives the slot back while the job waits. */
  giveBack(): void {
    const release = this.#held;
    this.#held = undefined;
    release?.();
  }
}
