/**
 * Subject Alternative Names the self-signed certificate must carry for a set of bind hosts.
 * Kept apart from generation so the reuse check (does the cert on disk still cover the hosts?)
 * and the issuer agree on one list.
 */
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import type { X509Certificate } from 'node:crypto';

/** The names a certificate must cover, split the way X.509 encodes them (RFC 5280 §4.2.1.6). */
export interface SanSet {
  dns: string[];
  ips: string[];
}

/** Names always present: clients on the same machine reach the server through these. */
const ALWAYS_DNS = ['localhost'];
const ALWAYS_IPS = ['127.0.0.1', '::1'];

/** A DNS label sequence (RFC 1123); os.hostname() values that are not one are left out. */
const DNS_NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** Normalise a bind host: strip IPv6 brackets and zone id, lowercase DNS names, drop a trailing dot. */
export function normaliseHost(host: string): string {
  let h = host.trim();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  const zone = h.indexOf('%');
  if (zone >= 0 && isIP(h.slice(0, zone)) === 6) h = h.slice(0, zone);
  if (isIP(h) === 0) h = h.toLowerCase().replace(/\.$/, '');
  return h;
}

/** True for the "all interfaces" binds, which name no host a client could verify. */
export function isWildcardHost(host: string): boolean {
  const h = normaliseHost(host);
  if (h === '' || h === '*' || h === '0.0.0.0') return true;
  return isIP(h) === 6 && h.split(':').every((part) => part === '' || /^0+$/.test(part));
}

/** SANs required for these bind hosts: localhost, 127.0.0.1, ::1, each concrete host, and os.hostname() when a wildcard is bound. */
export function requiredSans(hosts: readonly string[], machineName: string = hostname()): SanSet {
  const dns = new Set(ALWAYS_DNS);
  const ips = new Set(ALWAYS_IPS);
  for (const raw of hosts) {
    if (isWildcardHost(raw)) {
      // A wildcard bind is reached by the machine's name; its addresses may change (DHCP), so
      // they are not pinned into the certificate.
      const name = normaliseHost(machineName);
      if (DNS_NAME.test(name)) dns.add(name);
      continue;
    }
    const h = normaliseHost(raw);
    if (isIP(h) !== 0) ips.add(h);
    else if (DNS_NAME.test(h)) dns.add(h);
    else throw new Error(`bind host ${JSON.stringify(raw)} is neither an IP address nor a DNS name`);
  }
  return { dns: [...dns], ips: [...ips] };
}

/** Names from `want` that the certificate does not cover, using OpenSSL's own matching (exact names, no CN fallback). */
export function missingSans(cert: X509Certificate, want: SanSet): string[] {
  const missing: string[] = [];
  for (const ip of want.ips) if (cert.checkIP(ip) === undefined) missing.push(ip);
  // subject 'never': RFC 6125 §6.4.4 — a certificate with SANs is never matched on its CN.
  for (const name of want.dns) if (cert.checkHost(name, { subject: 'never' }) === undefined) missing.push(name);
  return missing;
}
