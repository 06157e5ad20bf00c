/**
 * Keeps the head and the tail of a stream that may be far larger than anyone should read: a build log's
 * first lines say what ran and its last lines say how it ended. Memory stays at `maxChars` however much
 * the process writes.
 */
export class HeadTailBuffer {
  readonly #maxChars: number;
  #head = '';
  #tail = '';
  #dropped = 0;

  constructor(maxChars: number) {
    this.#maxChars = maxChars;
  }

  push(chunk: string): void {
    const headRoom = Math.ceil(this.#maxChars / 2) - this.#head.length;
    if (headRoom > 0) {
      this.#head += chunk.slice(0, headRoom);
      chunk = chunk.slice(headRoom);
      if (!chunk) return;
    }
    const tailMax = Math.floor(this.#maxChars / 2);
    const joined = this.#tail + chunk;
    if (joined.length > tailMax) {
      this.#dropped += joined.length - tailMax;
      this.#tail = joined.slice(joined.length - tailMax);
    } else {
      this.#tail = joined;
    }
  }

  get truncated(): boolean {
    return this.#dropped > 0;
  }

  text(): string {
    if (!this.#dropped) return this.#head + this.#tail;
    return `${this.#head}\n[… ${this.#dropped} characters of output not kept …]\n${this.#tail}`;
  }
}
