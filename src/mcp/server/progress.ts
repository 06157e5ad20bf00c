import type { ProgressToken, ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { CadreEvent } from '../../core/index.ts';

/**
 * Turns a run tree's events into MCP progress notifications: a sub-agent starting or finishing and each
 * tool call, one message each, with a count that only goes up (as the protocol requires). Text deltas are
 * left out: progress says what is happening, the result carries the answer.
 */
export class ProgressReporter {
  #count = 0;
  #sending: Promise<void> = Promise.resolve();
  readonly #send: (notification: ServerNotification) => Promise<void>;
  readonly #token: ProgressToken;

  constructor(send: (notification: ServerNotification) => Promise<void>, token: ProgressToken) {
    this.#send = send;
    this.#token = token;
  }

  event(event: CadreEvent): void {
    const message = progressMessage(event);
    if (!message) return;
    const notification: ServerNotification = {
      method: 'notifications/progress',
      params: { progressToken: this.#token, progress: ++this.#count, message },
    };
    // In order, never blocking the run; a client that went away only loses its progress.
    this.#sending = this.#sending.then(() => this.#send(notification)).catch(() => undefined);
  }

  /** Resolves when every notification so far has been handed to the transport. */
  flush(): Promise<void> {
    return this.#sending;
  }
}

/** The line a person would want to see for an event, or undefined for events that are not progress. */
export function progressMessage(event: CadreEvent): string | undefined {
  switch (event.type) {
    case 'run-start':
      return event.depth === 0
        ? `${event.agent} started`
        : `sub-agent ${event.agent} started: ${oneLine(event.task, 160)}`;
    case 'run-finish':
      return event.depth === 0
        ? `${event.agent} finished: ${event.status}`
        : `sub-agent ${event.agent} finished: ${event.status}`;
    case 'tool-call':
      return event.refused
        ? `${event.agent} was refused ${event.name}: ${event.refused}`
        : `${event.agent} calls ${event.name}`;
    case 'tool-result':
      return event.ok
        ? undefined
        : `${event.agent}: ${event.name} failed: ${oneLine(event.error ?? '', 160)}`;
    default:
      return undefined;
  }
}

function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
