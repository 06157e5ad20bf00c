import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import type { UserStore } from '../app/users.ts';
import { FailedAuthLimiter, tokenIdOf } from './failed-auth-limiter.ts';
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
  /** Failed token checks one address (and one token id) may make per minute before 429s (default 20). */
  maxFailedAuthPerMinute?: number;
  /**
   * Addresses of reverse proxies whose `X-Forwarded-For` names the client. Without them the header is
   * ignored (anyone can send it): every client behind a proxy is then the proxy's one address.
   */
  trustedProxies?: string[];
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
 * operator meant.
 *
 * Failed token checks are counted per address and per token id, and a flood of wrong tokens must neither
 * keep the CPU busy with scrypt nor lock out the people who share the flooder's address (a NAT, a
 * proxy). So: a token this server has verified before is never refused; a token id with too many
 * failures is refused before any hash (someone is guessing that user's secret); and an address with too
 * many failures is refused only the tokens whose id has no user (found without hashing): the valid
 * tokens of its other users are still checked.
 */
export function authenticate(options: AuthOptions): MiddlewareHandler<ServerEnv> {
  let mode: Promise<AuthMode> | undefined = options.mode ? Promise.resolve(options.mode) : undefined;
  const limiter = new FailedAuthLimiter({ perMinute: options.maxFailedAuthPerMinute ?? 20 });
  const verified = new Set<string>();
  const trusted = new Set((options.trustedProxies ?? []).map(plainAddress));
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
    const header = c.req.header('authorization') ?? '';
    const token = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
    // CADRE_TOKEN costs one SHA-256 to check: it is never refused for what others sent.
    if (token && options.singleUserToken && sameSecret(token, options.singleUserToken)) {
      c.set('userId', 'local');
      return next();
    }
    const address = `address ${clientAddress(c, trusted)}`;
    const id = token ? tokenIdOf(token) : undefined;
    const fingerprint = token ? createHash('sha256').update(token).digest('base64url') : '';
    const known = verified.has(fingerprint);
    const idWait = id && !known ? limiter.retryAfterSeconds(`id ${id}`) : undefined;
    const addressWait = known ? undefined : limiter.retryAfterSeconds(address);
    if (idWait !== undefined || (addressWait !== undefined && !id)) return tooMany(c, idWait ?? addressWait!);
    // Past its address's limit, a token is checked only when its id is some user's (found without a hash).
    const user = token
      ? await options.users.verify(token, addressWait !== undefined ? { spareUnknownIds: true } : {})
      : undefined;
    if (!user) {
      if (token) {
        limiter.fail(address);
        if (id) limiter.fail(`id ${id}`);
      }
      if (addressWait !== undefined) return tooMany(c, addressWait);
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
    if (!known) {
      if (verified.size >= 10_000) verified.clear();
      verified.add(fingerprint);
    }
    c.set('userId', user.id);
    return next();
  };
}

function tooMany(c: Context<ServerEnv>, wait: number) {
  c.header('Retry-After', String(wait));
  return c.json(
    { error: { code: 'too_many_failed_logins', message: `Too many wrong tokens; try again in ${wait} s.` } },
    429,
  );
}

/**
 * The client's address: the socket's peer, or, when that peer is a trusted proxy, the last address in
 * `X-Forwarded-For` that is not one (each proxy appends the address it got the request from).
 */
function clientAddress(c: Context<ServerEnv>, trusted: Set<string>): string {
  const peer = remoteAddress(c);
  if (!trusted.has(plainAddress(peer))) return peer;
  const forwarded = (c.req.header('x-forwarded-for') ?? '')
    .split(',')
    .map((entry) => plainAddress(entry.trim()))
    .filter(Boolean);
  for (let index = forwarded.length - 1; index >= 0; index--) {
    if (!trusted.has(forwarded[index]!)) return forwarded[index]!;
  }
  return peer;
}

/** An address without the IPv4-mapped IPv6 prefix, so `::ffff:10.0.0.1` and `10.0.0.1` are one. */
function plainAddress(address: string): string {
  return address.toLowerCase().replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
}

/** The peer's address on a socket; in-process requests (tests) share one name, or give theirs in `env`. */
function remoteAddress(c: Context<ServerEnv>): string {
  const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  return incoming?.socket?.remoteAddress ?? 'in-process';
}
