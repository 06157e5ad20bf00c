/**
 * Wraps a store so every method does its work and answers a turn of the event loop later, the way a
 * store over the network (PostgreSQL) does; the embedded SQLite one does both at once. A caller that
 * forgets an `await` (a write not yet done when it reports success) then fails a test that looks at the
 * wrapped store directly. Calls still run in the order they were made, and each stays one call, so an
 * atomic method stays atomic.
 */
export function answeringLater<T extends object>(store: T): T {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) =>
        new Promise((resolve, reject) => {
          setImmediate(() => {
            Promise.resolve()
              .then(() => value.apply(target, args))
              .then(resolve, reject);
          });
        });
    },
  });
}
