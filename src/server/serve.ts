import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import { UserError } from '../core/index.ts';
import { authModeAtStart } from './auth.ts';
import { createServerApp, type ServerAppOptions } from './create-server-app.ts';
import { isLoopbackHost } from './security.ts';
import { DEFAULT_DISCARD_BYTES, type DiscardLimits, discardUnreadBodies } from './unread-bodies.ts';

export interface StartServerOptions extends Omit<ServerAppOptions, 'boundHost'> {
  host: string;
  port: number;
  /** Longest a client may take to send a whole request, body included (default 60 s). */
  requestTimeoutSeconds?: number;
  /** Longest a client may take to send a request's headers (default 15 s). */
  headersTimeoutSeconds?: number;
  /** What is read and thrown away of a refused request's body before its connection closes. */
  discard?: Partial<DiscardLimits>;
}

export interface RunningServer {
  url: string;
  host: string;
  port: number;
  /** Stops taking requests, stops running trees (recorded as cancelled), stores what is pending. */
  close(): Promise<void>;
}

/**
 * Puts the API on a socket. Without credentials (no user with a token, no `CADRE_TOKEN`) it refuses any
 * address but loopback, since anyone who can reach it would act as the local user.
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const users = options.users ?? options.cadre.users;
  const authOptions = {
    users,
    ...(options.singleUserToken ? { singleUserToken: options.singleUserToken } : {}),
  };
  // Fixed now, for as long as the server runs: see AuthMode.
  const authMode = await authModeAtStart(authOptions);
  if (!isLoopbackHost(options.host) && authMode === 'open') {
    throw new UserError(
      'needs_token',
      [
        `Refusing to listen on ${options.host} without credentials: anyone who can reach it would act as you.`,
        'Add a user and use its token:   cadre users add NAME',
        'or set a single token:          export CADRE_TOKEN=$(openssl rand -hex 32)',
        'or listen on this machine only: cadre serve --host 127.0.0.1',
      ].join('\n'),
      { host: options.host },
    );
  }
  const app = createServerApp({ ...options, users, boundHost: options.host, authMode });
  const server = await new Promise<ServerType>((resolve, reject) => {
    const started = serve(
      {
        fetch: app.fetch,
        hostname: options.host,
        port: options.port,
        // discardUnreadBodies below reads the rest of a refused body for longer than its 500 ms.
        autoCleanupIncoming: false,
        // Node's defaults (300 s for a body, 60 s for headers) let a client that sends a byte at a time
        // hold a connection for minutes; a chat request is small and an upload is bounded. Responses
        // (event streams) are not limited by these.
        serverOptions: {
          requestTimeout: (options.requestTimeoutSeconds ?? 60) * 1000,
          headersTimeout: (options.headersTimeoutSeconds ?? 15) * 1000,
          // Node checks those every 30 s by default, which would stretch a 15 s limit to 45.
          connectionsCheckingInterval: 1000,
        },
      },
      () => resolve(started),
    );
    started.once('error', reject);
  });
  discardUnreadBodies(server as Server, {
    maxBytes: options.discard?.maxBytes ?? DEFAULT_DISCARD_BYTES,
    maxMs: options.discard?.maxMs ?? (options.requestTimeoutSeconds ?? 60) * 1000,
  });
  const address = server.address() as AddressInfo;
  const shownHost = options.host.includes(':') ? `[${options.host}]` : options.host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${shownHost}:${address.port}`,
    host: options.host,
    port: address.port,
    close: () => {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        await options.cadre.live.cancelAll();
        // Followers of finished trees and idle keep-alive sockets would hold close() open.
        if ('closeAllConnections' in server) server.closeAllConnections();
        await stopped;
        await options.cadre.close();
      })();
      return closing;
    },
  };
}
