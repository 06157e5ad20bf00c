import type { Store } from '../../src/store/store.ts';

/**
 * Resolves once `check` holds: looked at now and each time the store says a chat list may have changed
 * (a session written, a tree started or ended: `watchLists`, in this process or another), never on a
 * timer. Rejects, saying `what`, when it still does not hold after `ms`.
 */
export function whenStored(
  store: Pick<Store, 'sessions'>,
  check: () => boolean | Promise<boolean>,
  what: string,
  ms = 20_000,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let done = false;
    let looking = Promise.resolve();
    const finish = (error?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      unwatch();
      if (error) reject(error);
      else resolve();
    };
    // Looks one at a time: a change told while one looks is looked at after it.
    const look = () => {
      looking = looking.then(async () => {
        if (done) return;
        try {
          if (await check()) finish();
        } catch (error) {
          finish(error as Error);
        }
      });
    };
    const timer = setTimeout(() => finish(new Error(`timed out waiting for ${what}`)), ms);
    const unwatch = store.sessions.watchLists(look);
    look();
  });
}
