import type { MiddlewareHandler } from 'hono';
import type { ServerEnv } from './server-env.ts';

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** True for addresses only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return bare === 'localhost' || bare === '::1' || /^127(\.\d{1,3}){3}$/.test(bare);
}

/** The host name of a Host header (port and IPv6 brackets handled), lower-case. */
function hostName(header: string): string {
  const value = header.trim().toLowerCase();
  if (value.startsWith('[')) return value.slice(0, value.indexOf(']') + 1);
  return value.split(':')[0] ?? '';
}

/** The Host a request names: its header, or (for in-process requests, which have none) its URL's. */
function requestHost(c: { req: { header(name: string): string | undefined; url: string } }): string {
  return c.req.header('host') ?? new URL(c.req.url).host;
}

/**
 * DNS-rebinding guard (MCP's transport guidance): a request must name this server in its Host header:
 * a loopback name, the address it is bound to, or a host the operator allowed. Bound to every interface
 * (`0.0.0.0`, `::`) with no allowed hosts named, any Host passes: such a server requires tokens anyway.
 */
export function hostGuard(options: {
  boundHost: string;
  allowedHosts?: string[];
}): MiddlewareHandler<ServerEnv> {
  const wildcard = options.boundHost === '0.0.0.0' || options.boundHost === '::';
  const allowed = new Set([
    ...LOOPBACK_NAMES,
    ...(options.allowedHosts ?? []).map((host) => host.toLowerCase()),
  ]);
  if (!wildcard) {
    const bound = options.boundHost.toLowerCase();
    allowed.add(bound.includes(':') && !bound.startsWith('[') ? `[${bound}]` : bound);
  }
  const open = wildcard && !options.allowedHosts?.length;
  return async (c, next) => {
    if (!open && !allowed.has(hostName(requestHost(c)))) {
      return c.json(
        { error: { code: 'forbidden_host', message: 'This server does not answer to that Host.' } },
        403,
      );
    }
    await next();
  };
}

/**
 * Browser requests from other sites are refused: an `Origin` header must be this server's own origin (the
 * scheme and Host of the request) or one the operator allowed. Programs that send no Origin pass.
 */
export function originGuard(options: { allowedOrigins?: string[] } = {}): MiddlewareHandler<ServerEnv> {
  const allowed = new Set((options.allowedOrigins ?? []).map((origin) => origin.toLowerCase()));
  return async (c, next) => {
    const origin = c.req.header('origin');
    if (origin) {
      const host = requestHost(c);
      const own = [`http://${host}`, `https://${host}`].map((value) => value.toLowerCase());
      const normalized = origin.toLowerCase();
      if (!own.includes(normalized) && !allowed.has(normalized)) {
        return c.json(
          { error: { code: 'forbidden_origin', message: 'Requests from other sites are refused.' } },
          403,
        );
      }
    }
    await next();
  };
}

/** Headers every response carries; the web app's files also get a strict Content-Security-Policy. */
export function securityHeaders(): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    await next();
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Referrer-Policy', 'no-referrer');
    c.header('X-Frame-Options', 'DENY');
    c.header('Cross-Origin-Opener-Policy', 'same-origin');
    c.header('Cross-Origin-Resource-Policy', 'same-origin');
    c.header(
      'Content-Security-Policy',
      [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
        "form-action 'self'",
      ].join('; '),
    );
  };
}
