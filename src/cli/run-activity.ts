import type { CadreEvent } from '../core/index.ts';

/** Characters of recent text kept per run: enough for one line, bounded however much a run writes. */
const KEEP = 400;

/**
 * The latest line of text each sub-agent is writing, from the event stream, for the live tree to show
 * under a running sub-agent. The root's text is the answer preview, so it is not kept here.
 */
export class RunActivity {
  #recent = new Map<string, string>();
  #retrying = new Map<string, string>();

  apply(event: CadreEvent): void {
    // A retry is told until the run's next event (any run, the root's too).
    if (event.type === 'model-retry') {
      const seconds = Math.max(1, Math.round(event.delayMs / 1000));
      this.#retrying.set(
        event.runId,
        `the provider is busy, retrying ${event.attempt}/${event.maxAttempts} in ${seconds}s: ${event.reason}`,
      );
      return;
    }
    this.#retrying.delete(event.runId);
    if (event.depth === 0) return;
    if (event.type === 'text-delta') {
      const text = (this.#recent.get(event.runId) ?? '') + event.delta;
      this.#recent.set(event.runId, text.length > KEEP ? text.slice(-KEEP) : text);
    } else if (event.type === 'run-finish') {
      this.#recent.delete(event.runId);
    }
  }

  /** What the run waits on when its provider asked it to wait (a retry), or undefined. */
  notice(runId: string): string | undefined {
    return this.#retrying.get(runId);
  }

  /** The last non-empty line the run wrote, or undefined. */
  latest(runId: string): string | undefined {
    const lines = (this.#recent.get(runId) ?? '').split('\n');
    for (let index = lines.length - 1; index >= 0; index--) {
      const line = lines[index]!.trim();
      if (line) return line;
    }
    return undefined;
  }
}
