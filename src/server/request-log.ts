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
    write(`${c.req.method} ${loggedPath(c.req.path)} ${c.res.status} ${ms}ms`);
  };
}

const MAX_LOGGED_PATH = 300;

/**
 * A request path as a log line may hold it: the path arrives percent-decoded, so a client could put a
 * newline in it (a forged line after it) or a terminal escape; control characters (C0, DEL, C1 and the
 * Unicode line and bidi controls) are written as \xNN / \uNNNN, and a long path is cut.
 */
export function loggedPath(path: string): string {
  let escaped = '';
  for (const char of path) {
    const code = char.codePointAt(0)!;
    if (char === '\\') escaped += '\\\\';
    else if (code < 0x20 || (code >= 0x7f && code <= 0x9f))
      escaped += `\\x${code.toString(16).padStart(2, '0')}`;
    else if (UNICODE_CONTROLS.has(code)) escaped += `\\u${code.toString(16).padStart(4, '0')}`;
    else escaped += char;
    if (escaped.length > MAX_LOGGED_PATH) return `${escaped.slice(0, MAX_LOGGED_PATH)}…`;
  }
  return escaped;
}

/** Line separators and the bidi controls that reorder what a terminal shows. */
const UNICODE_CONTROLS = new Set([
  0x2028, 0x2029, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069,
]);
