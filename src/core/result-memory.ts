import type { ResultEnvelope } from './envelope.ts';

/**
 * Which earlier sub-agent result a delegation may reuse: the same person, the same session, the same
 * agent on the same model, and the same input (task and declared inputs, whitespace aside).
 */
export interface ResultKey {
  userId: string;
  sessionId: string;
  agent: string;
  model: string;
  /** The normalised input, as JSON. */
  input: string;
}

export interface RememberedResult {
  envelope: ResultEnvelope;
  /** When the run that produced it finished, in milliseconds since the epoch. */
  finishedAt: number;
}

/**
 * Where finished sub-agent results are kept so a later question in the same session can reuse them
 * (seed 000's cached last result with a TTL). The runtime decides what is fresh enough; the store only
 * keeps the latest result per key.
 */
export interface ResultMemory {
  recall(key: ResultKey): Promise<RememberedResult | undefined>;
  remember(key: ResultKey, result: RememberedResult): Promise<void>;
}

/** An in-process memory (tests, library use); Cadre's app keeps results in its store instead. */
export class InMemoryResultMemory implements ResultMemory {
  #results = new Map<string, RememberedResult>();

  async recall(key: ResultKey): Promise<RememberedResult | undefined> {
    return this.#results.get(JSON.stringify(key));
  }

  async remember(key: ResultKey, result: RememberedResult): Promise<void> {
    this.#results.set(JSON.stringify(key), result);
  }
}
