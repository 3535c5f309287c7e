/**
 * The egress guard at connect time: the destination is normalised, resolved once, every address
 * it resolves to is checked (policy.ts), and the socket connects to an address that was checked,
 * never to a second resolution (no DNS rebinding between a check and the connect). Three hooks,
 * one check: `guardConnector` wraps an undici connector (webhooks, HTTP connectors, S3, SSO
 * discovery); `guardedLookup` is a `net`/`tls` `lookup` option; `connectAddresses` for the rest.
 */
import { promises as dns, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import type { buildConnector } from 'undici';
import { EgressRefusedError, normaliseHost } from './address.js';
import { envPolicy, refusal, type EgressPolicy } from './policy.js';

export { EgressRefusedError } from './address.js';

/** Resolves a name to every address (injectable: tests resolve a name to loopback without DNS). */
export type Resolve = (host: string) => Promise<LookupAddress[]>;

export interface GuardOptions {
  /** the policy (default: the process environment's, envPolicy) */
  policy?: () => EgressPolicy;
  resolve?: Resolve;
}

const systemResolve: Resolve = (host) => dns.lookup(host, { all: true, verbatim: true });

/**
 * The addresses `host` may be reached at on `port`, each checked; EgressRefusedError when any of
 * them is refused (a name with one private address among public ones is refused: fail closed).
 */
export async function connectAddresses(host: string, port: number, o: GuardOptions = {}): Promise<LookupAddress[]> {
  const policy = (o.policy ?? envPolicy)();
  const h = normaliseHost(host);
  const family = isIP(h);
  const addresses = family !== 0 ? [{ address: h, family }] : await (o.resolve ?? systemResolve)(h);
  if (addresses.length === 0) throw Object.assign(new Error(`${h} resolved to no address`), { code: 'ENOTFOUND' });
  for (const a of addresses) {
    const why = refusal(policy, h, port, normaliseHost(a.address));
    if (why !== null) throw new EgressRefusedError(`egress refused: ${why}`);
  }
  return addresses;
}

/** The first `egress refused` reason in an error's cause chain (undici wraps connector errors), or null. */
export function egressRefusalOf(err: unknown): string | null {
  for (let e = err as { code?: string; message?: string; cause?: unknown } | undefined, i = 0; e && i < 5; e = e.cause as typeof e, i++) {
    if (e instanceof EgressRefusedError || e.code === 'EGRESS_REFUSED') return e.message ?? 'egress refused';
  }
  return null;
}

/** A `lookup` for `net.connect` / `tls.connect` to `port`: checks every address before the socket connects. */
export function guardedLookup(port: number, o: GuardOptions = {}): LookupFunction {
  return (hostname, options, callback) => {
    connectAddresses(hostname, port, o).then(
      (all) => {
        if (options.all) return callback(null, all);
        const one = all.find((a) => !options.family || a.family === options.family) ?? (all[0] as LookupAddress);
        callback(null, one.address, one.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

/** `host` for net/tls: a literal address is checked here (Node calls no lookup for one), a name by `guardedLookup`. */
export async function checkLiteral(host: string, port: number, o: GuardOptions = {}): Promise<void> {
  if (isIP(normaliseHost(host)) !== 0) await connectAddresses(host, port, o);
}

const NEXT_ADDRESS = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT']);

/**
 * An undici connector that connects only to checked addresses: the origin's host is resolved and
 * checked, then `base` connects to each checked address in turn (until one answers) with the
 * origin's name kept for SNI and certificate verification.
 */
export function guardConnector(base: buildConnector.connector, o: GuardOptions = {}): buildConnector.connector {
  return (opts, callback) => {
    const port = Number(opts.port) || (opts.protocol === 'https:' ? 443 : 80);
    connectAddresses(opts.hostname, port, o).then(
      (addresses) => {
        const named = isIP(normaliseHost(opts.hostname)) === 0;
        const attempt = (i: number): void => {
          const a = addresses[i] as LookupAddress;
          const servername = opts.servername ?? (named ? normaliseHost(opts.hostname) : undefined);
          base({ ...opts, hostname: a.address, ...(servername ? { servername } : {}) }, (err, socket) => {
            const code = (err as NodeJS.ErrnoException | null)?.code;
            if (err && i + 1 < addresses.length && code !== undefined && NEXT_ADDRESS.has(code)) return attempt(i + 1);
            if (err) return callback(err, null);
            callback(null, socket as NonNullable<typeof socket>);
          });
        };
        attempt(0);
      },
      (err: Error) => callback(err, null),
    );
  };
}

/** How long an authoring check waits for a name to resolve; an unresolved name is left to the connect-time check. */
const AUTHORING_WAIT_MS = 2_000;

/**
 * At authoring time (a webhook endpoint, a connector's URL or host): the refusal reason when the
 * host is, or now resolves to, an address the guard refuses; null otherwise. A name that does not
 * resolve (yet) is no address to refuse: every connection is checked again when it is made.
 */
export async function authoringRefusal(host: string, port: number, o: GuardOptions = {}): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const wait = new Promise<null>((r) => (timer = setTimeout(() => r(null), AUTHORING_WAIT_MS)));
  try {
    await Promise.race([connectAddresses(host, port, o), wait]);
    return null;
  } catch (err) {
    return egressRefusalOf(err);
  } finally {
    clearTimeout(timer);
  }
}
