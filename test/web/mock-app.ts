/**
 * The built web app (web/dist) on 127.0.0.1 with a stand-in API: fixed sessions, agents and settings, and
 * a chat route the caller scripts (paced, so the page sees a stream arrive over time). Used by the
 * rendering benchmark and by layout screenshots; the behaviour tests run against the real `cadre serve`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UI_STREAM_HEADERS, type UiStream } from './ui-stream.ts';

export const WEB_DIST = fileURLToPath(new URL('../../web/dist/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
};

export interface MockApp {
  url: string;
  close(): Promise<void>;
}

/** Serves web/dist and the stand-in API; `chat` answers POST /api/chat. */
export async function startMockApp(options: {
  chat: () => UiStream;
  /** Chunks sent per write, and the pause between writes (ms). */
  chunksPerWrite?: number;
  pauseMs?: number;
}): Promise<MockApp> {
  if (!existsSync(join(WEB_DIST, 'index.html')))
    throw new Error('web/dist is missing: run `npm run build:web` first.');
  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname.startsWith('/api/')) return api(url.pathname, request, response);
    const file = join(WEB_DIST, url.pathname === '/' ? 'index.html' : url.pathname);
    const path =
      file.startsWith(WEB_DIST) && existsSync(file) && extname(file) ? file : join(WEB_DIST, 'index.html');
    response.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream' });
    response.end(readFileSync(path));
  });
  const json = (response: ServerResponse, body: unknown) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };
  async function api(path: string, request: IncomingMessage, response: ServerResponse) {
    for await (const _ of request) {
      // Drain the request body.
    }
    if (path === '/api/sessions') return json(response, { sessions: [] });
    if (path === '/api/sessions/search') return json(response, { matches: [] });
    // The live chat list: the empty list once, then nothing (kept open, as the real server keeps it).
    if (path === '/api/sessions/events') {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      response.write(`event: sessions\ndata: ${JSON.stringify({ sessions: [] })}\n\n`);
      return;
    }
    if (path === '/api/settings')
      return json(response, { model: 'compatible:fixture', delegationMode: 'delegate' });
    if (path === '/api/agents') return json(response, { agents: [] });
    if (path === '/api/models') return json(response, { providers: [], unconfigured: [] });
    if (path === '/api/documents') return json(response, { documents: [] });
    if (path === '/api/approvals') return json(response, { approvals: [] });
    // Nothing is running to attach to (the page asks on opening a chat).
    if (/^\/api\/chat\/[^/]+\/stream$/.test(path)) {
      response.writeHead(204);
      response.end();
      return;
    }
    if (path === '/api/chat') {
      const chunks = options
        .chat()
        .toSse()
        .split(/(?<=\n\n)/);
      response.writeHead(200, UI_STREAM_HEADERS);
      const perWrite = options.chunksPerWrite ?? chunks.length;
      for (let index = 0; index < chunks.length; index += perWrite) {
        response.write(chunks.slice(index, index + perWrite).join(''));
        if (options.pauseMs) await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
      }
      response.end();
      return;
    }
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: { message: 'not found' } }));
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
