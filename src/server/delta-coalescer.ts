import type { CadreEvent, ReasoningDeltaEvent, TextDeltaEvent } from '../core/index.ts';

type DeltaEvent = TextDeltaEvent | ReasoningDeltaEvent;

export interface CoalescerOptions {
  /** Longest a delta waits to be merged with the next ones, in milliseconds. */
  windowMs: number;
  /** A run's pending text is sent once it reaches this many characters. */
  maxChars: number;
}

export const DEFAULT_COALESCING: CoalescerOptions = { windowMs: 20, maxChars: 8192 };

/**
 * Merges consecutive text (or reasoning) deltas of one run into one delta before they go on the wire, so a
 * model that streams a few characters at a time does not pay a full event header per few characters. Each
 * run's events keep their order: any other event of a run first sends that run's pending delta. A merged
 * event carries the seq and time of the last delta in it.
 */
export class DeltaCoalescer {
  #pending = new Map<string, { event: DeltaEvent; parts: string[]; chars: number }>();
  #timer: NodeJS.Timeout | undefined;
  #emit: (event: CadreEvent) => void;
  #options: CoalescerOptions;

  constructor(emit: (event: CadreEvent) => void, options: CoalescerOptions = DEFAULT_COALESCING) {
    this.#emit = emit;
    this.#options = options;
  }

  push(event: CadreEvent): void {
    if (event.type === 'text-delta' || event.type === 'reasoning-delta') {
      const pending = this.#pending.get(event.runId);
      if (pending && pending.event.type === event.type) {
        pending.parts.push(event.delta);
        pending.chars += event.delta.length;
        pending.event = { ...event, delta: '' };
        if (pending.chars >= this.#options.maxChars) this.#send(event.runId);
        return;
      }
      this.#send(event.runId);
      this.#pending.set(event.runId, { event, parts: [event.delta], chars: event.delta.length });
      this.#timer ??= setTimeout(() => this.flush(), this.#options.windowMs);
      return;
    }
    this.#send(event.runId);
    this.#emit(event);
  }

  /** Sends every pending delta now. */
  flush(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const runId of [...this.#pending.keys()]) this.#send(runId);
  }

  #send(runId: string): void {
    const pending = this.#pending.get(runId);
    if (!pending) return;
    this.#pending.delete(runId);
    this.#emit({ ...pending.event, delta: pending.parts.join('') });
  }
}
