import type { Experimental_Steering as Steering, UserModelMessage } from 'ai';
import type { RunMessage } from './tree-record.ts';

/**
 * A run's messages from a person, from when they reach its process to the model step they join. They go
 * to the AI SDK's steering of the run's current model loop (one per `streamText` call), which adds each as
 * a user message at the next step boundary, after the current step and its tool calls, and keeps the loop
 * going for it; those not yet added when a loop ends wait for the run's next one. `joined` gives the step's
 * messages back with their ids, in the order they were sent, once the SDK has added them.
 */
export class RunInbox {
  /** Handed to the run and not yet joined, in the order they came. */
  #waiting: RunMessage[] = [];
  /** Every id the run has had (joined, replayed, or waiting): a message handed again joins once. */
  #seen = new Set<string>();
  #steering: Steering | undefined;
  /** Woken by the next message (a run that waits between turns, see background.ts). */
  #arrival: { promise: Promise<void>; resolve: () => void } | undefined;

  /** Takes a message for the run; false when it had it already. */
  send(message: RunMessage): boolean {
    if (this.#seen.has(message.id)) return false;
    this.#seen.add(message.id);
    this.#waiting.push(message);
    void this.#steering?.steer(asUserMessage(message), { id: message.id });
    this.#arrival?.resolve();
    this.#arrival = undefined;
    return true;
  }

  /** A message an earlier attempt recorded (replayed at its step): the run has had it. */
  replayed(id: string): void {
    this.#seen.add(id);
    this.#waiting = this.#waiting.filter((message) => message.id !== id);
  }

  /** The steering of the run's next model loop, with what waits handed to it. */
  attach(steering: Steering): void {
    this.#steering = steering;
    for (const message of this.#waiting) void steering.steer(asUserMessage(message), { id: message.id });
  }

  detach(): void {
    this.#steering = undefined;
  }

  /** Settles when the next message comes. */
  arrival(): Promise<void> {
    if (!this.#arrival) {
      let resolve: () => void = () => {};
      const promise = new Promise<void>((settle) => {
        resolve = settle;
      });
      this.#arrival = { promise, resolve };
    }
    return this.#arrival.promise;
  }

  /** Whether a message waits for the run's next model step. */
  get waiting(): boolean {
    return this.#waiting.length > 0;
  }

  /** The waiting messages the SDK added to this step (`count` of them, the oldest first), now joined. */
  joined(count: number): RunMessage[] {
    return this.#waiting.splice(0, count);
  }
}

/**
 * How a message reads in the run's conversation: a person's said to come from them, not from its parent; a
 * background run's envelope said to be the result of that sub-agent's run.
 */
export function asUserMessage(message: Pick<RunMessage, 'text' | 'background'>): UserModelMessage {
  const { background } = message;
  if (background)
    return {
      role: 'user',
      content: `The sub-agent ${background.agent} you started in the background (run_id ${background.runId}) has finished. Its result: ${message.text}\nUse it: answer the person with what it adds, or go on with your work.`,
    };
  return { role: 'user', content: `Message from the person following this run: ${message.text}` };
}
