/**
 * Which non-public destinations an operator allows (docs/configuration.md "Outgoing connections").
 * Public unicast addresses are always reachable; every other class (loopback, link-local, private,
 * CGNAT, unique-local, unspecified, multicast, broadcast, reserved, documentation, benchmarking…)
 * is refused unless:
 * - `SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS=true` (the development flag): loopback only;
 * - `SERVICE_EGRESS_ALLOW_PRIVATE` names it: a comma-separated list of entries, each
 *   `10.0.0.0/8` or `fd00::/8` (a range, any port), `10.1.2.3` / `10.1.2.3:6514` / `[fd00::1]:443`
 *   (one address, optionally one port), or `syslog.internal` / `syslog.internal:6514` (a name: what
 *   it resolves to is allowed, on that port when one is given).
 * Both are read from the process environment, as `svc serve` was started.
 */
import { isIP } from 'node:net';
import type ipaddr from 'ipaddr.js';
import { classify, inRange, isLocalhostName, normaliseHost, parseRange } from './address.js';

export const ALLOW_PRIVATE_ENV = 'SERVICE_EGRESS_ALLOW_PRIVATE';
export const DEV_FLAG_ENV = 'SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS';

interface RangeEntry {
  range: [ipaddr.IPv4 | ipaddr.IPv6, number];
  port: number | undefined;
  text: string;
}
interface NameEntry {
  host: string;
  port: number | undefined;
  text: string;
}

export interface EgressPolicy {
  /** the development flag: loopback destinations are allowed */
  devLoopback: boolean;
  ranges: RangeEntry[];
  names: NameEntry[];
}

/** The development flag's reading (also plain `http://` for webhooks, endpoint.ts). */
export function devFlag(env: NodeJS.ProcessEnv = process.env): boolean {
  return ['1', 'true', 'yes'].includes((env[DEV_FLAG_ENV] ?? '').toLowerCase());
}

function port(text: string, entry: string): number {
  const n = Number(text);
  if (!/^\d{1,5}$/.test(text) || n < 1 || n > 65535) throw new Error(`${ALLOW_PRIVATE_ENV}: bad port in ${JSON.stringify(entry)}`);
  return n;
}

/** One entry of the allowlist; throws naming it when it is none of the documented forms. */
function parseEntry(entry: string): { range?: RangeEntry; name?: NameEntry } {
  const bad = (): Error => new Error(`${ALLOW_PRIVATE_ENV}: ${JSON.stringify(entry)} is not a range, an address[:port] or a name[:port]`);
  if (entry.includes('/')) {
    try {
      return { range: { range: parseRange(entry), port: undefined, text: entry } };
    } catch {
      throw bad();
    }
  }
  let host = entry;
  let p: number | undefined;
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracket) {
    host = bracket[1] as string;
    if (bracket[2] !== undefined) p = port(bracket[2], entry);
  } else if (isIP(entry) !== 6) {
    const i = entry.lastIndexOf(':');
    if (i >= 0) {
      host = entry.slice(0, i);
      p = port(entry.slice(i + 1), entry);
    }
  }
  let normal: string;
  try {
    normal = normaliseHost(host);
  } catch {
    throw bad();
  }
  if (isIP(normal)) return { range: { range: parseRange(normal), port: p, text: entry } };
  if (!/^[a-z0-9_.-]+$/.test(normal)) throw bad();
  return { name: { host: normal, port: p, text: entry } };
}

/** The policy of an environment; throws naming the first bad allowlist entry. */
export function parsePolicy(env: NodeJS.ProcessEnv = process.env): EgressPolicy {
  const policy: EgressPolicy = { devLoopback: devFlag(env), ranges: [], names: [] };
  for (const raw of (env[ALLOW_PRIVATE_ENV] ?? '').split(/[\s,]+/)) {
    if (raw === '') continue;
    const e = parseEntry(raw);
    if (e.range) policy.ranges.push(e.range);
    if (e.name) policy.names.push(e.name);
  }
  return policy;
}

let memo: { key: string; policy: EgressPolicy } | undefined;
/** The process environment's policy (re-read when the variables change, as tests do). */
export function envPolicy(): EgressPolicy {
  const key = `${process.env[DEV_FLAG_ENV] ?? ''}\u0000${process.env[ALLOW_PRIVATE_ENV] ?? ''}`;
  if (memo?.key !== key) memo = { key, policy: parsePolicy(process.env) };
  return memo.policy;
}

/**
 * Why `address` (which `host`, in normal form, resolved to; the same for a literal) may not be
 * reached on `port`, or null when it may.
 */
export function refusal(policy: EgressPolicy, host: string, port: number, address: string): string | null {
  const named = isLocalhostName(host);
  const cls = named ? 'loopback' : classify(address);
  if (cls === null) return null;
  if (policy.devLoopback && cls.startsWith('loopback')) return null;
  const portOk = (p: number | undefined): boolean => p === undefined || p === port;
  if (policy.names.some((n) => n.host === host && portOk(n.port))) return null;
  if (!named && policy.ranges.some((r) => inRange(address, r.range) && portOk(r.port))) return null;
  const where = named ? `${host} (a localhost name)` : host === address ? address : `${host} (resolved to ${address})`;
  const dev = cls.startsWith('loopback') ? ` (in development, loopback with ${DEV_FLAG_ENV}=true)` : '';
  // `loopback (127.0.0.1 in NAT64 64:ff9b::/96)` reads "a loopback address (127.0.0.1 in …)"
  const m = /^(\w+) \((.*)\)$/.exec(cls);
  const what = m ? `a ${m[1]} address (${m[2]})` : `a ${cls} address`;
  return `${where} is ${what}; an operator may allow it with ${ALLOW_PRIVATE_ENV}${dev}`;
}
