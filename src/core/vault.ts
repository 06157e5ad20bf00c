import { ModelBehaviorError } from './errors.ts';

/** A run's own scratch store: what `vault_set` writes and `vault_get` reads. Never shared between runs. */
export class Vault {
  #entries = new Map<string, unknown>();
  readonly maxEntries: number;
  readonly maxValueBytes: number;

  constructor(limits: { maxEntries?: number; maxValueBytes?: number } = {}) {
    this.maxEntries = limits.maxEntries ?? 256;
    this.maxValueBytes = limits.maxValueBytes ?? 256 * 1024;
  }

  set(key: string, value: unknown): void {
    const size = Buffer.byteLength(JSON.stringify(value) ?? 'null');
    if (size > this.maxValueBytes) {
      throw new ModelBehaviorError(
        'tool_input',
        `vault value for "${key}" is ${size} bytes; the limit is ${this.maxValueBytes}`,
      );
    }
    if (!this.#entries.has(key) && this.#entries.size >= this.maxEntries) {
      throw new ModelBehaviorError(
        'tool_input',
        `the vault is full (${this.maxEntries} keys); overwrite an existing key instead`,
      );
    }
    this.#entries.set(key, structuredClone(value));
  }

  get(key: string): unknown {
    return structuredClone(this.#entries.get(key));
  }

  has(key: string): boolean {
    return this.#entries.has(key);
  }

  keys(): string[] {
    return [...this.#entries.keys()];
  }
}
