import { Writable } from 'node:stream';

/** A writable stream that keeps what is written; `tty` makes it look like a terminal of `columns`. */
export function captureStream(options: { tty?: boolean; columns?: number } = {}) {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += chunk;
      done();
    },
  }) as Writable & { isTTY?: boolean; columns?: number };
  if (options.tty) {
    stream.isTTY = true;
    stream.columns = options.columns ?? 80;
  }
  return { stream, text: () => text };
}
