import { lookup } from 'node:dns/promises';
import { classifyAddress, isBlockedHostname, isIpLiteral } from './address-policy.ts';
import { BlockedUrlError } from './http-errors.ts';

/** One resolved address of a hostname. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a hostname to all its addresses; injected in tests, `dns.lookup` otherwise. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) => {
  const found = await lookup(hostname, { all: true, verbatim: true });
  return found.map((entry) => ({ address: entry.address, family: entry.family === 6 ? 6 : 4 }));
};

export interface GuardOptions {
  resolve: Resolver;
  /** `host` or `host:port` entries let through even when private (`CADRE_FETCH_ALLOW`). */
  allowHosts: ReadonlySet<string>;
  /** Which addresses count as reachable; public unicast unless a test narrows it. */
  isAllowedAddress?: (address: string) => boolean;
}

/** A URL that passed the guard, with the one address the connection must go to. */
export interface CheckedTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

/**
 * Checks one hop of a request from a model or from content: scheme, credentials, host name, and every
 * address the name resolves to. The caller connects to `address` and nothing else, so a DNS answer that
 * changes between this check and the connection (rebinding) cannot move the request.
 */
export async function checkUrl(raw: string | URL, options: GuardOptions): Promise<CheckedTarget> {
  const text = String(raw);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new BlockedUrlError(text, 'it is not a valid absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new BlockedUrlError(text, `only http and https are allowed, not ${url.protocol.replace(':', '')}`);
  }
  if (url.username || url.password) throw new BlockedUrlError(text, 'URLs with credentials are not fetched');
  const hostname = url.hostname.toLowerCase();
  const allowed = isAllowlisted(url, options.allowHosts);
  const permits = options.isAllowedAddress ?? ((address: string) => classifyAddress(address).allowed);

  if (!allowed && isBlockedHostname(hostname)) {
    throw new BlockedUrlError(text, `the host ${hostname} is internal`);
  }
  if (isIpLiteral(hostname)) {
    const address = hostname.replace(/^\[|\]$/g, '');
    if (!allowed && !permits(address)) {
      throw new BlockedUrlError(
        text,
        `${address} is a ${classifyAddress(address).range} address, not a public one`,
      );
    }
    return { url, address, family: address.includes(':') ? 6 : 4 };
  }

  let addresses: ResolvedAddress[];
  try {
    addresses = await options.resolve(hostname);
  } catch {
    throw new BlockedUrlError(text, `the host ${hostname} does not resolve`);
  }
  const first = addresses[0];
  if (!first) throw new BlockedUrlError(text, `the host ${hostname} has no addresses`);
  if (!allowed) {
    const bad = addresses.find((entry) => !permits(entry.address));
    if (bad) {
      throw new BlockedUrlError(
        text,
        `${hostname} resolves to ${bad.address}, a ${classifyAddress(bad.address).range} address`,
      );
    }
  }
  return { url, address: first.address, family: first.family };
}

/** Parses `CADRE_FETCH_ALLOW`: comma-separated `host` or `host:port`, lower-cased. */
export function parseAllowHosts(value: string | undefined): Set<string> {
  return new Set(
    (value ?? '')
      .split(',')
      .map((entry) => entry.trim().toLowerCase())
      .filter(Boolean),
  );
}

function isAllowlisted(url: URL, allowHosts: ReadonlySet<string>): boolean {
  if (allowHosts.size === 0) return false;
  const hostname = url.hostname.toLowerCase();
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return allowHosts.has(hostname) || allowHosts.has(`${hostname}:${port}`);
}
