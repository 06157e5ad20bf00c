import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { UserStore } from '../app/users.ts';
import type { ServerEnv } from './server-env.ts';

/** Where credentials come from: the users store, and `CADRE_TOKEN` (single-user mode, acting as `local`). */
export interface AuthOptions {
  users: UserStore;
  singleUserToken?: string;
}

/** True when the server must ask for a token: `CADRE_TOKEN` is set or some user has one. */
export async function credentialsExist(options: AuthOptions): Promise<boolean> {
  return Boolean(options.singleUserToken) || (await options.users.hasTokens());
}

function sameSecret(a: string, b: string): boolean {
  // Hashing first makes the comparison constant-time whatever the lengths.
  const left = createHash('sha256').update(a).digest();
  const right = createHash('sha256').update(b).digest();
  return timingSafeEqual(left, right);
}

/**
 * Sets the user a request acts for. Without any credentials configured every request is the `local` user
 * (the server then listens on loopback only); once credentials exist, `Authorization: Bearer <token>` is
 * required and a missing or unknown token is a 401. Users may be added while the server runs.
 */
export function authenticate(options: AuthOptions): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    if (!(await credentialsExist(options))) {
      c.set('userId', 'local');
      return next();
    }
    const header = c.req.header('authorization') ?? '';
    const token = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
    let userId: string | undefined;
    if (token && options.singleUserToken && sameSecret(token, options.singleUserToken)) userId = 'local';
    else if (token) userId = (await options.users.verify(token))?.id;
    if (!userId) {
      c.header('WWW-Authenticate', 'Bearer realm="cadre"');
      return c.json(
        {
          error: {
            code: 'unauthorized',
            message: token
              ? 'That token is not valid here.'
              : 'This server needs "Authorization: Bearer <token>" (CADRE_TOKEN, or one from "cadre users add NAME").',
          },
        },
        401,
      );
    }
    c.set('userId', userId);
    return next();
  };
}
