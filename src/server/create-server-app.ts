import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Cadre } from '../app/create-cadre.ts';
import { METRICS_CONTENT_TYPE } from '../app/metrics.ts';
import type { UserStore } from '../app/users.ts';
import { VERSION } from '../app/version.ts';
import { UserError } from '../core/index.ts';
import { type AuthMode, authenticate } from './auth.ts';
import { httpError, internalErrorLine } from './http-errors.ts';
import { refuseControlCharacters } from './request-guards.ts';
import { requestLog } from './request-log.ts';
import { agentRoutes } from './routes/agents.ts';
import { approvalRoutes } from './routes/approvals.ts';
import { chatRoutes } from './routes/chat.ts';
import { DEFAULT_UPLOAD_LIMITS, documentRoutes } from './routes/documents.ts';
import { modelRoutes } from './routes/models.ts';
import { openAIErrorShape, openAIRoutes } from './routes/openai.ts';
import { runRoutes } from './routes/runs.ts';
import { sessionRoutes } from './routes/sessions.ts';
import { settingsRoutes } from './routes/settings.ts';
import { webAppRoutes } from './routes/web-app.ts';
import { hostGuard, originGuard, securityHeaders } from './security.ts';
import type { ServerEnv } from './server-env.ts';

/** Limits a server enforces; every one configurable (`server` in config.json). */
export interface ServerLimits {
  /** Largest JSON body (chat, settings), in bytes. */
  maxBodyBytes: number;
  /** Largest upload request (documents), in bytes. */
  maxUploadBytes: number;
  /** Answers one user may have running at once. */
  maxConcurrentChats: number;
  /** Deepest nesting of arrays and objects in a chat body (deeper cannot be stored: a stack overflow). */
  maxJsonDepth: number;
  /** Wrong tokens one address may send per minute before it is refused with 429. */
  maxFailedAuthPerMinute: number;
  /** Files one upload request may carry. */
  maxFilesPerUpload: number;
  /** Uploads one user may have in progress at once (each parses its files one by one, in a worker). */
  maxConcurrentUploads: number;
  /** Uploads in progress on the whole server: the most parse workers uploads keep at once. */
  maxConcurrentUploadsTotal: number;
}

export const DEFAULT_SERVER_LIMITS: ServerLimits = {
  maxBodyBytes: 1024 * 1024,
  maxUploadBytes: 50 * 1024 * 1024,
  maxConcurrentChats: 4,
  maxJsonDepth: 256,
  maxFailedAuthPerMinute: 20,
  ...DEFAULT_UPLOAD_LIMITS,
};

export interface ServerAppOptions {
  cadre: Cadre;
  /** The address the server is bound to (Host checks accept it besides loopback names). */
  boundHost?: string;
  /** More Host names to answer to (a reverse proxy's public name). */
  allowedHosts?: string[];
  /** More browser origins allowed to call the API. */
  allowedOrigins?: string[];
  /** Reverse proxies whose `X-Forwarded-For` names the client (for the failed-token limits). */
  trustedProxies?: string[];
  users?: UserStore;
  /** `CADRE_TOKEN`: single-user mode. */
  singleUserToken?: string;
  /** Fixed by `startServer`; left out, the first request fixes it (see `AuthMode`). */
  authMode?: AuthMode;
  limits?: Partial<ServerLimits>;
  /** Where the web app's built files are (default: web/dist of this package). */
  webRoot?: string;
  /** One line per request; default: nothing. */
  log?: (line: string) => void;
  /**
   * More routes behind the same Host, Origin and auth checks, e.g. `{ path: '/mcp', routes }`. Their
   * handlers read the caller from `c.var.userId` and Cadre from `c.var.cadre`.
   */
  mounts?: Array<{ path: string; routes: Hono<ServerEnv> }>;
}

/**
 * The HTTP API and web app as one Hono app (tests call `app.request()`; `serve()` puts it on a socket).
 * Order: request log, security headers, Host check, Origin check, then per area body limits and auth.
 */
export function createServerApp(options: ServerAppOptions): Hono<ServerEnv> {
  const { cadre } = options;
  const limits = { ...DEFAULT_SERVER_LIMITS, ...options.limits };
  const users = options.users ?? cadre.users;
  const auth = authenticate({
    users,
    ...(options.singleUserToken ? { singleUserToken: options.singleUserToken } : {}),
    ...(options.authMode ? { mode: options.authMode } : {}),
    maxFailedAuthPerMinute: limits.maxFailedAuthPerMinute,
    ...(options.trustedProxies ? { trustedProxies: options.trustedProxies } : {}),
  });
  const app = new Hono<ServerEnv>();
  if (options.log) app.use('*', requestLog(options.log));
  app.use('*', securityHeaders());
  app.use(
    '*',
    hostGuard({
      boundHost: options.boundHost ?? '127.0.0.1',
      ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}),
    }),
  );
  app.use('*', originGuard(options.allowedOrigins ? { allowedOrigins: options.allowedOrigins } : {}));
  app.use('*', async (c, next) => {
    c.set('cadre', cadre);
    await next();
  });
  app.onError((error, c) => {
    const mapped = httpError(error);
    if (mapped.internal) options.log?.(internalErrorLine(c.req.method, c.req.path, error));
    return c.json(mapped.body, mapped.status as 400);
  });
  const noRoute = (c: Context<ServerEnv>) =>
    c.json({ error: { code: 'not_found', message: `No route for ${c.req.method} ${c.req.path}.` } }, 404);
  app.notFound(noRoute);

  app.get('/health', (c) => c.json({ ok: true, version: VERSION }));
  // Whether questions can be answered now: the database, its migrations, a worker (see app/readiness.ts).
  app.get('/ready', async (c) => {
    const ready = await c.var.cadre.readiness();
    return c.json({ ...ready, version: VERSION }, ready.ready ? 200 : 503);
  });

  const tooLarge = (max: number) => () => {
    throw new UserError('payload_too_large', `The request body is larger than ${max} bytes.`, { max });
  };
  // Before auth and the body limit, so their refusals reach OpenAI clients in OpenAI's shape.
  app.use('/v1/*', openAIErrorShape());
  for (const prefix of ['/api/*', '/v1/*']) {
    app.use(prefix, auth);
    app.use(prefix, refuseControlCharacters());
  }
  app.use(
    '/api/documents',
    bodyLimit({ maxSize: limits.maxUploadBytes, onError: tooLarge(limits.maxUploadBytes) }),
  );
  app.use('/api/*', async (c, next) => {
    if (c.req.path === '/api/documents') return next();
    return bodyLimit({ maxSize: limits.maxBodyBytes, onError: tooLarge(limits.maxBodyBytes) })(c, next);
  });
  app.use('/v1/*', bodyLimit({ maxSize: limits.maxBodyBytes, onError: tooLarge(limits.maxBodyBytes) }));

  app.route(
    '/api/chat',
    chatRoutes({
      maxConcurrentChats: limits.maxConcurrentChats,
      maxJsonDepth: limits.maxJsonDepth,
      ...(options.log ? { log: options.log } : {}),
    }),
  );
  app.route('/api/sessions', sessionRoutes());
  app.route('/api/runs', runRoutes({ maxConcurrentChats: limits.maxConcurrentChats }));
  app.route('/v1', openAIRoutes({ maxConcurrentChats: limits.maxConcurrentChats }));
  app.route('/api/agents', agentRoutes());
  app.route('/api/models', modelRoutes());
  app.route('/api/settings', settingsRoutes());
  app.route('/api/approvals', approvalRoutes());
  app.route('/api/documents', documentRoutes(limits));
  // Prometheus's text, when the config turns metrics on: behind the same token as the API (a scraper
  // sends it as a bearer token); a 404 otherwise, as for any path the server does not have.
  app.get('/metrics', auth, async (c) => {
    const text = await c.var.cadre.metricsText();
    if (text === undefined) return noRoute(c);
    return new Response(text, { status: 200, headers: { 'content-type': METRICS_CONTENT_TYPE } });
  });
  for (const mount of options.mounts ?? []) {
    app.use(mount.path, auth);
    app.use(`${mount.path}/*`, auth);
    app.route(mount.path, mount.routes);
  }
  // API paths never fall through to the web app's page (a client would get HTML with a 200). Nor do
  // well-known metadata paths: an MCP client that meets a 401 on /mcp looks there for OAuth and must
  // learn there is none (it then uses the token it was given), not choke on HTML.
  app.all('/api/*', noRoute);
  app.all('/v1/*', noRoute);
  app.all('/.well-known/*', noRoute);
  app.route('/', webAppRoutes(options.webRoot));
  return app;
}
