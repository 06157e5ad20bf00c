import { Semaphore } from '../core/semaphore.ts';
import type { Store, StoredEvent } from '../store/store.ts';

/** One page of a stored tree: at most this many events, and about this many characters of them. */
const PAGE = { limit: 256, maxChars: 4 * 1024 * 1024 };
/** Pages read from the store at once in this process, by every reader together. */
const heavyReads = new Semaphore(4);

/**
 * A stored tree's events after `after`, read a page at a time, so a reader holds one page, not the tree
 * (four readers of a 300 MB tree took 2.6 GB when each read it whole), and at most four pages are being
 * read at once however many readers there are. A slow reader (an SSE client that does not read) holds
 * only the page it is on.
 */
export async function* storedEventPages(
  runs: Store['runs'],
  userId: string,
  rootRunId: string,
  options: { after?: number; signal?: AbortSignal } = {},
): AsyncGenerator<StoredEvent> {
  let after = options.after ?? 0;
  while (!options.signal?.aborted) {
    const release = await heavyReads.acquire(options.signal);
    let page: StoredEvent[];
    try {
      page = await runs.events(userId, rootRunId, { after, ...PAGE });
    } finally {
      release();
    }
    if (page.length === 0) return;
    yield* page;
    after = page.at(-1)!.cursor;
  }
}
