import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import type { UserStore } from '../app/users.ts';
import { FailedAuthLimiter } from './failed-auth-limiter.ts';
import type { ServerEnv } from './server-env.ts';

/** Where credentials come from: the users store, and `CADRE_TOKEN` (single-user mode, acting as `local`). */
export interface AuthOptions {
  users: UserStore;
  singleUserToken?: string;
  /**
   * How the server authenticates, fixed when it starts (`authModeAtStart`). Left out (an app made for
   * in-process tests), it is fixed by the first request that needs it, and never changes after.
   */
  mode?: AuthMode;
  /** Failed token checks one address may make per minute before it gets 429s (default 20). */
  maxFailedAuthPerMinute?: number;
}

/**
 * `open`: no credentials existed when the server started, so every request is the `local` user (the
 * server then listens on loopback only). `tokens`: every API request needs a bearer token, and nothing
 * that happens later (every user removed, `CADRE_TOKEN` unset) makes it `open`.
 */
export type AuthMode = 'open' | 'tokens';

/** True when the server must ask for a token: `CADRE_TOKEN` is set or some user has one. */
export async function credentialsExist(
  options: Pick<AuthOptions, 'users' | 'singleUserToken'>,
): Promise<boolean> {
  return Boolean(options.singleUserToken) || (await options.users.hasTokens());
}

/** The mode a server starting now runs in, for as long as it runs. */
export async function authModeAtStart(
  options: Pick<AuthOptions, 'users' | 'singleUserToken'>,
): Promise<AuthMode> {
  return (await credentialsExist(options)) ? 'tokens' : 'open';
}

function sameSecret(a: string, b: string): boolean {
  // Hashing first makes the comparison constant-time whatever the lengths.
  const left = createHash('sha256').update(a).digest();
  const right = createHash('sha256').update(b).digest();
  return timingSafeEqual(left, right);
}

/**
 * Sets the user a request acts for. The mode is fixed once (see `AuthMode`) and the server never falls
 * back to `local` from `tokens`: a question asked on every request ("do credentials exist?") would let
 * `cadre users rm` of the last user open a running server on every interface to anyone. An `open` server
 * that sees credentials appear refuses with 503 until it is restarted, rather than guess which mode the
 * operator meant. Failed token checks are limited per address (429), before any hash is computed.
 */
export function authenticate(options: AuthOptions): MiddlewareHandler<ServerEnv> {
  let mode: Promise<AuthMode> | undefined = options.mode ? Promise.resolve(options.mode) : undefined;
  const limiter = new FailedAuthLimiter({ perMinute: options.maxFailedAuthPerMinute ?? 20 });
  return async (c, next) => {
    mode ??= authModeAtStart(options);
    if ((await mode) === 'open') {
      if (await credentialsExist(options)) {
        return c.json(
          {
            error: {
              code: 'restart_needed',
              message:
                'This server started without credentials and users or a token now exist: restart it so every request needs a token.',
            },
          },
          503,
        );
      }
      c.set('userId', 'local');
      return next();
    }
    const address = remoteAddress(c);
    const wait = limiter.retryAfterSeconds(address);
    if (wait !== undefined) {
      c.header('Retry-After', String(wait));
      return c.json(
        {
          error: {
            code: 'too_many_failed_logins',
            message: `Too many wrong tokens; try again in ${wait} s.`,
          },
        },
        429,
      );
    }
    const header = c.req.header('authorization') ?? '';
    const token = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
    let userId: string | undefined;
    if (token && options.singleUserToken && sameSecret(token, options.singleUserToken)) userId = 'local';
    else if (token) userId = (await options.users.verify(token))?.id;
    if (!userId) {
      if (token) limiter.fail(address);
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

/** The peer's address on a socket; in-process requests (tests) share one name. */
function remoteAddress(c: Context<ServerEnv>): string {
  const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  return incoming?.socket?.remoteAddress ?? 'in-process';
}
