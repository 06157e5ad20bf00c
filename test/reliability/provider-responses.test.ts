import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { tempHome } from '../helpers/cli.ts';
import { cadreInProcess } from '../helpers/cli-in-process.ts';

let closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.map((close) => close()));
  closers = [];
});

/** A hostile "model server" on 127.0.0.1 that answers every request with `handle`. */
async function hostileServer(handle: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => handle(req, res));
  });
  const sockets = new Set<import('node:net').Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

function ask(baseURL: string) {
  const home = tempHome();
  const env = { CADRE_HOME: home, CADRE_MODEL: 'compatible:fixture', CADRE_COMPATIBLE_BASE_URL: baseURL };
  return cadreInProcess(['ask', '--agent', 'math', 'What is 2 + 2?'], env, home);
}

const sse = (payload: object) => `data: ${JSON.stringify(payload)}\n\n`;
const chunk = (content: string) =>
  sse({
    id: 'x',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'fixture',
    choices: [{ index: 0, delta: { content }, finish_reason: null }],
  });

describe('what a model server sends back, said as it is', () => {
  it('a 200 answer with an HTML page says so, with the page title', async () => {
    const baseURL = await hostileServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        '<!doctype html><html><head><title>Sign in - Corporate Proxy</title></head><body>Please sign in</body></html>',
      );
    });
    const result = await ask(baseURL);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(
      /answered HTTP 200 with an HTML page \(text\/html\) instead of a model response/,
    );
    expect(result.stderr).toContain('Sign in - Corporate Proxy');
    expect(result.stderr).not.toMatch(/finish reason/);
  });

  it('a connection cut in the middle of an answer says the answer broke off, not that the server was unreachable', async () => {
    const baseURL = await hostileServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk('Two plus two '));
      res.write(chunk('is'), () => setTimeout(() => res.socket?.destroy(), 20));
    });
    const result = await ask(baseURL);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/connection .*closed in the middle of the answer/);
    expect(result.stderr).not.toMatch(/could not reach/);
  });

  it('reads an error body only up to a limit (the server is cut off, the process stays small)', async () => {
    let sent = 0;
    let cutOff = false;
    const LIMIT = 300 * 1024 * 1024;
    const baseURL = await hostileServer((_req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      const piece = Buffer.alloc(1024 * 1024, 'a');
      res.write('{"error":{"message":"');
      const pump = () => {
        while (sent < LIMIT) {
          sent += piece.length;
          if (!res.write(piece)) return void res.once('drain', pump);
        }
        res.end('"}}');
      };
      res.on('close', () => {
        cutOff = sent < LIMIT;
      });
      pump();
    });
    const home = tempHome();
    const result = await cadreInProcess(['ask', '--agent', 'math', 'What is 2 + 2?'], {
      CADRE_HOME: home,
      CADRE_MODEL: 'compatible:fixture',
      CADRE_COMPATIBLE_BASE_URL: baseURL,
    });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/HTTP 400/);
    expect(result.stderr.length).toBeLessThan(5_000);
    await expect.poll(() => cutOff).toBe(true);
    expect(sent).toBeLessThan(32 * 1024 * 1024);
  });
});
