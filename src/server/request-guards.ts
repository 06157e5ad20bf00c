import type { MiddlewareHandler } from 'hono';
import { UserError } from '../core/index.ts';
import type { ServerEnv } from './server-env.ts';

/** True when `text` holds a control character (C0 or DEL): never part of an id, a name or a query. */
export function hasControlCharacter(text: string): boolean {
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/**
 * Refuses (400) a request whose path or query holds a control character, once, before any route reads
 * an id from it: a NUL in an id reached PostgreSQL, which cannot store one, and came back as a 500 on
 * every route with an id (SQLite answered 404).
 */
export function refuseControlCharacters(): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    const query = new URL(c.req.url).searchParams;
    const values = [c.req.path, ...query.keys(), ...query.values()];
    if (values.some(hasControlCharacter)) {
      throw new UserError('bad_request', 'Ids, names and queries hold no control characters.', {});
    }
    return next();
  };
}
