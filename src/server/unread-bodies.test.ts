import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { testServer } from '../../test/helpers/server.ts';
import { type RunningServer, startServer } from './serve.ts';

const running: RunningServer[] = [];
afterEach(async () => {
  for (const server of running.splice(0)) await server.close();
});

/**
 * A client as curl or Python's requests behave: it sends the whole body, in 64 KiB pieces `pauseMs` apart
 * (a network slower than loopback), and only then reads the answer. Returns the answer's status line, the
 * bytes it got to send, and the error its socket met, if any.
 */
function sendAllThenRead(
  port: number,
  bytes: number,
  pauseMs: number,
  request: { head: string; body?: Buffer } = {
    head: 'PATCH /api/settings HTTP/1.1\r\ncontent-type: application/json',
  },
) {
  return new Promise<{ status: string; sent: number; error?: string }>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.pause();
    let answer = '';
    let sent = 0;
    let error: string | undefined;
    socket.on('error', (failure: NodeJS.ErrnoException) => {
      // A failure after the answer was read (the client closing) is not what is asked about.
      if (!answer) error ??= failure.code ?? failure.message;
    });
    socket.on('close', () =>
      resolve({ status: answer.split('\r\n')[0] ?? '', sent, ...(error ? { error } : {}) }),
    );
    socket.write(`${request.head}\r\nhost: 127.0.0.1\r\ncontent-length: ${bytes}\r\n\r\n`);
    const body = request.body ?? Buffer.alloc(bytes, 32);
    const next = () => {
      if (socket.destroyed) return;
      if (sent >= bytes) {
        // All sent: now read what the server said.
        socket.on('data', (data: Buffer) => {
          answer += data.toString('latin1');
          // The answer's head is in: the client is done with this connection.
          if (answer.includes('\r\n\r\n')) socket.destroy();
        });
        socket.resume();
        return;
      }
      const part = body.subarray(sent, Math.min(sent + 64 * 1024, bytes));
      socket.write(part);
      sent += part.length;
      setTimeout(next, pauseMs);
    };
    next();
  });
}

describe('a request refused for its size', () => {
  it('is answered 413 to a client that sends its whole body before reading, even when sending takes a while', async () => {
    const { cadre } = await testServer([{ text: 'hi' }]);
    const server = await startServer({ cadre, host: '127.0.0.1', port: 0 });
    running.push(server);
    // 8 MiB against the 1 MiB body limit, over more than a second: the server used to cut the connection
    // 500 ms after its answer, and the client met EPIPE while still sending.
    const result = await sendAllThenRead(server.port, 8 * 1024 * 1024, 8);
    expect(result).toEqual({ status: 'HTTP/1.1 413 Payload Too Large', sent: 8 * 1024 * 1024 });
  });

  it('is answered 413 when an upload has more files than allowed, its files and the rest sent before reading', async () => {
    const { cadre } = await testServer([{ text: 'hi' }]);
    const server = await startServer({ cadre, host: '127.0.0.1', port: 0 });
    running.push(server);
    // 25 small files (20 allowed), then a large one: the refusal comes at the 21st, 8 MiB before the end.
    const boundary = 'cadre-test-boundary';
    const part = (name: string, content: string | Buffer) =>
      Buffer.concat([
        Buffer.from(
          `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="${name}"\r\ncontent-type: text/plain\r\n\r\n`,
        ),
        Buffer.isBuffer(content) ? content : Buffer.from(content),
        Buffer.from('\r\n'),
      ]);
    const parts = Array.from({ length: 25 }, (_, index) => part(`note-${index}.txt`, `note ${index}`));
    const body = Buffer.concat([
      ...parts,
      part('big.txt', Buffer.alloc(8 * 1024 * 1024, 97)),
      Buffer.from(`--${boundary}--\r\n`),
    ]);
    const result = await sendAllThenRead(server.port, body.length, 8, {
      head: `POST /api/documents HTTP/1.1\r\ncontent-type: multipart/form-data; boundary=${boundary}`,
      body,
    });
    expect(result).toEqual({ status: 'HTTP/1.1 413 Payload Too Large', sent: body.length });
  });

  it('reads no more than its bound of a body it refused, then cuts the connection', async () => {
    const { cadre } = await testServer([{ text: 'hi' }]);
    const server = await startServer({
      cadre,
      host: '127.0.0.1',
      port: 0,
      discard: { maxBytes: 1024 * 1024 },
    });
    running.push(server);
    const result = await sendAllThenRead(server.port, 64 * 1024 * 1024, 0);
    expect(result.error).toMatch(/EPIPE|ECONNRESET/);
    // What the kernel buffers besides the bound is a few MiB, far from the 64 MiB the client offered.
    expect(result.sent).toBeLessThan(16 * 1024 * 1024);
  });
});
