import ipaddr from 'ipaddr.js';

/**
 * Which network addresses a guarded request may connect to. Only public unicast passes: ipaddr.js names
 * every special range (loopback, private, link-local, CGNAT, multicast, reserved, documentation,
 * benchmarking) and every IPv6 form that embeds or translates an IPv4 address (IPv4-mapped, NAT64,
 * 6to4, Teredo), and anything it does not call `unicast` is refused, so a new special range in a later
 * ipaddr.js is refused by default rather than allowed.
 */
export interface AddressVerdict {
  allowed: boolean;
  /** ipaddr.js's name for the range, e.g. `loopback`, `private`, `ipv4Mapped`. */
  range: string;
}

/** Hostnames refused whatever they resolve to: cloud metadata services reachable by name. */
const BLOCKED_HOSTNAMES = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
]);

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/** Classifies one literal IP address; anything unparseable is refused. */
export function classifyAddress(address: string): AddressVerdict {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (!ipaddr.isValid(bare)) return { allowed: false, range: 'invalid' };
  const parsed = ipaddr.parse(bare);
  const range = parsed.range();
  // ipaddr.js calls every IPv6 address outside its named ranges `unicast`, including the IPv4-compatible
  // ::a.b.c.d (::7f00:1 is loopback on stacks that still route it); only 2000::/3 is global unicast.
  if (range === 'unicast' && parsed.kind() === 'ipv6' && !parsed.match(GLOBAL_UNICAST_V6)) {
    return { allowed: false, range: 'reserved' };
  }
  return { allowed: range === 'unicast', range };
}

/** True for public unicast addresses only. */
export function isPublicAddress(address: string): boolean {
  return classifyAddress(address).allowed;
}

/** True when `hostname` (already lower-cased by URL parsing) names a metadata service or localhost. */
export function isBlockedHostname(hostname: string): boolean {
  const name = hostname.replace(/\.$/, '');
  return (
    BLOCKED_HOSTNAMES.has(name) ||
    name === 'localhost' ||
    name.endsWith('.localhost') ||
    name.endsWith('.internal') ||
    name.endsWith('.local')
  );
}

/** True when the URL host is an IP literal (WHATWG parsing already turned `0x7f.1` and `2130706433` into dotted form). */
export function isIpLiteral(hostname: string): boolean {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  return ipaddr.isValid(bare) && (bare.includes(':') || ipaddr.IPv4.isValidFourPartDecimal(bare));
}
