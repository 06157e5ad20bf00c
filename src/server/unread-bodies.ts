import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** How much of a refused request's body a server reads and throws away, and for how long. */
export interface DiscardLimits {
  /** Bytes read past the answer before the connection is cut (default 64 MiB). */
  maxBytes: number;
  /** Time given to the rest of the body after the answer, in ms (default: the server's request timeout). */
  maxMs: number;
}

export const DEFAULT_DISCARD_BYTES = 64 * 1024 * 1024;

/**
 * Reads and discards the body a client is still sending once its answer (a 413, a 401) has gone out, up to
 * `maxBytes` and `maxMs`, so the connection closes after the client has sent its request and it reads the
 * answer. Cutting the connection while the client still sends makes it see a reset (EPIPE, ECONNRESET)
 * instead of the answer: clients such as curl or Python's requests write the whole body before they read.
 * Past either bound the connection is cut, so a client cannot make the server read without end.
 * (@hono/node-server's own clean-up gives the rest only 500 ms, which a client on a real network, or on a
 * loaded machine, needs longer for; it is turned off where this is installed.)
 */
export function discardUnreadBodies(server: Server, limits: DiscardLimits): void {
  server.on('request', (incoming: IncomingMessage, outgoing: ServerResponse) => {
    if (incoming.method === 'GET' || incoming.method === 'HEAD') return;
    outgoing.once('finish', () => {
      if (incoming.complete || incoming.destroyed) return;
      // A body declared larger than the bound is cut at once: reading it would not reach its end.
      const declared = Number(incoming.headers['content-length']);
      if (declared > limits.maxBytes) incoming.socket?.destroy();
      else discardRest(incoming, limits);
    });
  });
}

/**
 * Node discards a body nobody began to read by itself (without handing it to listeners): then only the
 * time bound is this function's. A body the app began to read and left (paused) is read here and counted.
 */
function discardRest(incoming: IncomingMessage, { maxBytes, maxMs }: DiscardLimits): void {
  let read = 0;
  const settle = () => {
    // Node's own discarding of an unread body ends here too ('end' is emitted once the request is in).
    clearTimeout(timer);
    incoming.off('data', count);
    incoming.off('end', settle);
    incoming.off('error', settle);
  };
  const cut = () => {
    settle();
    incoming.socket?.destroy();
  };
  const count = (chunk: Buffer) => {
    read += chunk.length;
    if (read > maxBytes) cut();
  };
  const timer = setTimeout(cut, maxMs);
  timer.unref();
  incoming.on('data', count);
  incoming.once('end', settle);
  incoming.once('error', settle);
  incoming.resume();
}
