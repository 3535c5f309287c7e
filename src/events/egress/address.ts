/**
 * The egress guard's view of a destination (docs/configuration.md "Outgoing connections"): one
 * normal form per host, and the class of every address. The normal form is the WHATWG URL host
 * parser's, the one undici and `fetch` connect with: every IPv4 spelling (decimal `2130706433`,
 * octal `0177.0.0.1`, hex `0x7f.1`, short `127.1`) becomes dotted decimal, IPv6 is compressed
 * without brackets, a name is lower-case ASCII (IDNA) without its trailing dot. A name is never
 * trusted for what it looks like: its resolved addresses are classified at connect time
 * (connect.ts); `localhost` and `*.localhost` are loopback by definition (RFC 6761) as well.
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** A destination that may not be reached; `reason` names the address and its class. */
export class EgressRefusedError extends Error {
  override readonly name = 'EgressRefusedError';
  readonly code = 'EGRESS_REFUSED';
}

/** `host` in its normal form (see above); throws EgressRefusedError when it is no host at all. */
export function normaliseHost(raw: string): string {
  let h = raw.trim();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  // an IPv6 literal with a zone (`fe80::1%eth0`) is link-local whatever the zone says
  const zone = h.indexOf('%');
  if (zone > 0 && h.includes(':')) h = h.slice(0, zone);
  let host: string;
  try {
    host = new URL(`http://${isIP(h) === 6 || (h.includes(':') && !h.includes('.')) ? `[${h}]` : h}/`).hostname;
  } catch {
    throw new EgressRefusedError(`${JSON.stringify(raw)} is not a host name or address`);
  }
  if (host.startsWith('[')) return host.slice(1, -1);
  // WHATWG keeps one trailing dot of a name (`localhost.`); the name is the same without it
  while (host.endsWith('.')) host = host.slice(0, -1);
  if (host === '') throw new EgressRefusedError(`${JSON.stringify(raw)} is not a host name or address`);
  return host;
}

/** The class of an address that is not a public unicast one, or null when it is public. */
export function classify(address: string): string | null {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address);
  } catch {
    return 'not an address';
  }
  if (ip.kind() === 'ipv4') {
    const range = (ip as ipaddr.IPv4).range();
    return range === 'unicast' ? null : range;
  }
  const v6 = ip as ipaddr.IPv6;
  const embedded = embeddedIPv4(v6);
  if (embedded !== null) {
    const inner = classify(embedded.address);
    return inner === null ? null : `${inner} (${embedded.address} in ${embedded.how})`;
  }
  const p = v6.parts;
  // ::/96 other than :: and ::1 is the deprecated IPv4-compatible form (RFC 4291 §2.5.5.1): never routed
  if (p.slice(0, 6).every((x) => x === 0) && !(p[6] === 0 && (p[7] === 0 || p[7] === 1))) return 'ipv4Compatible';
  const range = v6.range();
  return range === 'unicast' ? null : range;
}

/** The IPv4 address an IPv6 address carries when a translator or tunnel reaches it: mapped, NAT64, 6to4. */
export function embeddedIPv4(v6: ipaddr.IPv6): { address: string; how: string } | null {
  const p = v6.parts as number[];
  const v4 = (hi: number, lo: number): string => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const zeros = (from: number, to: number): boolean => p.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && p[5] === 0xffff) return { address: v4(p[6]!, p[7]!), how: 'IPv4-mapped ::ffff:0:0/96' };
  if (zeros(0, 4) && p[4] === 0xffff && p[5] === 0) return { address: v4(p[6]!, p[7]!), how: 'IPv4-translated ::ffff:0:0:0/96' };
  if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) return { address: v4(p[6]!, p[7]!), how: 'NAT64 64:ff9b::/96' };
  if (p[0] === 0x2002) return { address: v4(p[1]!, p[2]!), how: '6to4 2002::/16' };
  return null;
}

/** RFC 6761: `localhost` and every name under it are loopback, whatever a resolver answers. */
export function isLocalhostName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

/** Whether `address` (an IP in any form) lies in `cidr` (an ipaddr.js parsed range), the embedded IPv4 included. */
export function inRange(address: string, cidr: [ipaddr.IPv4 | ipaddr.IPv6, number]): boolean {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address);
  } catch {
    return false;
  }
  const candidates: Array<ipaddr.IPv4 | ipaddr.IPv6> = [ip];
  if (ip.kind() === 'ipv6') {
    const e = embeddedIPv4(ip as ipaddr.IPv6);
    if (e) candidates.push(ipaddr.parse(e.address));
  }
  return candidates.some((c) => c.kind() === cidr[0].kind() && c.match(cidr));
}

/** Parses `a.b.c.d/n`, `v6/n` or a single address into a range; throws on anything else. */
export function parseRange(text: string): [ipaddr.IPv4 | ipaddr.IPv6, number] {
  const t = text.startsWith('[') && text.includes(']') ? text.slice(1, text.indexOf(']')) + text.slice(text.indexOf(']') + 1) : text;
  if (t.includes('/')) return ipaddr.parseCIDR(t);
  const ip = ipaddr.parse(t);
  return [ip, ip.kind() === 'ipv4' ? 32 : 128];
}
