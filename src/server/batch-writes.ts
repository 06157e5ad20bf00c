/**
 * Joins the byte chunks a stream produces within one turn of the event loop into one chunk, so a burst of
 * small SSE frames (a step's events arrive together) costs one socket write instead of one each. Nothing
 * waits longer than the current turn.
 */
export function batchWrites(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  let pending: Uint8Array[] = [];
  let scheduled = false;
  const join = (): Uint8Array => {
    if (pending.length === 1) return pending[0]!;
    const size = pending.reduce((total, chunk) => total + chunk.byteLength, 0);
    const joined = new Uint8Array(size);
    let offset = 0;
    for (const chunk of pending) {
      joined.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return joined;
  };
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        pending.push(chunk);
        if (scheduled) return;
        scheduled = true;
        setImmediate(() => {
          scheduled = false;
          if (!pending.length) return;
          const joined = join();
          pending = [];
          try {
            controller.enqueue(joined);
          } catch {
            // The reader went away (a closed connection); the tree goes on without it.
          }
        });
      },
      flush(controller) {
        if (pending.length) controller.enqueue(join());
        pending = [];
      },
    }),
  );
}
