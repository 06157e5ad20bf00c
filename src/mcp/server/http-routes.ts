import { randomUUID } from 'node:crypto';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Hono } from 'hono';
import type { Cadre } from '../../app/create-cadre.ts';
import { createAgentMcpServer } from './agent-server.ts';

/** What the routes read from the request context: set by the server's auth (who asks) and composition. */
export interface McpHttpEnv {
  Variables: { userId: string; cadre: Cadre };
}

/** Limits of the HTTP door; each configurable. */
export interface McpHttpLimits {
  /** Open sessions per user; the least recently used one is closed past it. */
  maxSessionsPerUser: number;
  /** A session unused this long is closed. */
  idleMs: number;
  /** Largest request body, in bytes. */
  maxBodyBytes: number;
  /** Agent calls one user may have running at once, over all their sessions; more are refused. */
  maxConcurrentCalls: number;
}

export const DEFAULT_MCP_HTTP_LIMITS: McpHttpLimits = {
  maxSessionsPerUser: 16,
  idleMs: 30 * 60 * 1000,
  maxBodyBytes: 1024 * 1024,
  maxConcurrentCalls: 8,
};

interface Session {
  userId: string;
  server: Server;
  transport: WebStandardStreamableHTTPServerTransport;
  lastUsed: number;
  /** The calls not yet answered. */
  inFlight: Set<Promise<unknown>>;
  /** Aborted when the session is closed: its calls stop and answer (cancelled) before their streams end. */
  closing: AbortController;
}

/**
 * Cadre's agents over MCP's Streamable HTTP transport, to mount at `/mcp` behind the server's Host,
 * Origin and auth checks. Each session belongs to the user who opened it (another user's session id is
 * "not found"), and its calls run for that user, over that user's documents. Sessions are kept in memory:
 * progress notifications stream on the call's own response, and a `notifications/cancelled` posted to the
 * session reaches the call it names.
 */
export function mcpHttpRoutes(
  options: { limits?: Partial<McpHttpLimits>; now?: () => number } = {},
): Hono<McpHttpEnv> & { closeAll(): Promise<void> } {
  const limits = { ...DEFAULT_MCP_HTTP_LIMITS, ...options.limits };
  const now = options.now ?? Date.now;
  const sessions = new Map<string, Session>();
  // Each POST's own signal, by the auth info handed with it to the transport (which passes that object on
  // to every request handler of the POST): the signal aborts when the client goes away before its answer.
  const requestSignals = new WeakMap<AuthInfo, AbortSignal>();
  const requestSignal = (extra: { authInfo?: AuthInfo }) =>
    extra.authInfo ? requestSignals.get(extra.authInfo) : undefined;
  const app = new Hono<McpHttpEnv>();

  const close = async (id: string) => {
    const session = sessions.get(id);
    if (!session) return;
    sessions.delete(id);
    // A client whose call's stream simply ends waits for an answer until its own timeout (the SDK's
    // client does): stop the calls and let their answers go out first, then close.
    session.closing.abort(new Error('the MCP session was closed'));
    await Promise.allSettled([...session.inFlight]);
    // The SDK sends a handler's answer a few promise steps after the handler returns.
    await new Promise((resolve) => setImmediate(resolve));
    await session.server.close().catch(() => undefined);
  };
  const evict = async (userId: string) => {
    for (const [id, session] of sessions) if (now() - session.lastUsed > limits.idleMs) await close(id);
    const own = [...sessions].filter(([, session]) => session.userId === userId);
    own.sort(([, a], [, b]) => a.lastUsed - b.lastUsed);
    while (own.length >= limits.maxSessionsPerUser) await close(own.shift()![0]);
  };

  app.all('/', async (c) => {
    const userId = c.var.userId;
    const length = Number(c.req.header('content-length') ?? 0);
    if (length > limits.maxBodyBytes)
      return jsonRpcError(413, `The request body is larger than ${limits.maxBodyBytes} bytes.`);
    const sessionId = c.req.header('mcp-session-id');
    if (sessionId) {
      const session = sessions.get(sessionId);
      if (!session || session.userId !== userId)
        return jsonRpcError(
          404,
          'No such MCP session (it ended, or belongs to someone else); initialize a new one.',
        );
      session.lastUsed = now();
      // No event store, so a stream that broke cannot be resumed: a call whose POST the client abandons
      // (it quit, crashed or lost the network) has nobody left to answer, and its tree is cancelled.
      const authInfo: AuthInfo = { token: '', clientId: userId, scopes: [] };
      requestSignals.set(authInfo, c.req.raw.signal);
      return session.transport.handleRequest(c.req.raw, { authInfo });
    }
    if (c.req.method !== 'POST')
      return jsonRpcError(400, 'Start with an initialize request (POST) to open a session.');
    await evict(userId);
    const inFlight = new Set<Promise<unknown>>();
    const closing = new AbortController();
    const server = createAgentMcpServer(c.var.cadre, userId, {
      inFlight,
      // Checked and counted with no await between (the call joins `inFlight` right after), so calls that
      // arrive at once cannot all pass.
      admit: () => {
        let running = 0;
        for (const session of sessions.values())
          if (session.userId === userId) running += session.inFlight.size;
        return running < limits.maxConcurrentCalls
          ? undefined
          : `At most ${limits.maxConcurrentCalls} agent calls may run at once for one user; wait for one to finish or cancel it.`;
      },
      stopSignal: (extra) => {
        const gone = requestSignal(extra);
        return gone ? AbortSignal.any([gone, closing.signal]) : closing.signal;
      },
    });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      maxRequestBodySize: limits.maxBodyBytes,
      onsessioninitialized: (id) => {
        sessions.set(id, { userId, server, transport, lastUsed: now(), inFlight, closing });
      },
      onsessionclosed: (id) => close(id),
    });
    await server.connect(transport);
    const response = await transport.handleRequest(c.req.raw);
    // Anything but a successful initialize opened no session: let the server go.
    if (!transport.sessionId || !sessions.has(transport.sessionId))
      await server.close().catch(() => undefined);
    return response;
  });

  return Object.assign(app, {
    async closeAll() {
      await Promise.all([...sessions.keys()].map(close));
    },
  });
}

function jsonRpcError(status: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}
