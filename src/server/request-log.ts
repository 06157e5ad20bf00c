import type { MiddlewareHandler } from 'hono';
import type { ServerEnv } from './server-env.ts';

/**
 * One line per request when it ends: method, path (never the query string, which could carry a secret),
 * status and milliseconds. Streams are logged when their headers go out, with the time to first byte.
 */
export function requestLog(write: (line: string) => void): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    const started = performance.now();
    await next();
    const ms = Math.round(performance.now() - started);
    write(`${c.req.method} ${c.req.path} ${c.res.status} ${ms}ms`);
  };
}
