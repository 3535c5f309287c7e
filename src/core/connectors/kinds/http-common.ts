/**
 * What the HTTP kinds (siem, splunkhec, otlp, search, chronicle) share: the endpoint and TLS part of
 * their config schema, the checks on it, one undici client per connector with the trust rules
 * (system roots, an extra CA file, a SHA-256 SPKI pin), no redirects, timeouts, and the reading of
 * an answer's status (`Retry-After` included) into a `SinkResult`.
 *
 * Trust, in order of strength (the same rules as the CLI's `--ca-cert` / `--pin-sha256`):
 * - `tls.ca_file`: chain and host name verified against the system roots plus that PEM;
 * - `tls.pin_sha256` alone: the leaf's SubjectPublicKeyInfo SHA-256 (RFC 7469 §2.4, base64 or hex)
 *   must match; chain and host name are not checked (a self-signed receiver);
 * - both: both hold. Neither: the system roots.
 * A failed check destroys the socket before undici writes one byte of the request.
 * `http://` is refused unless `allow_insecure_http` is set, and even then only towards a loopback
 * address (a development receiver on the same machine). Every connection goes through the egress
 * guard (src/events/egress): loopback needs the development flag, private ranges an operator's
 * SERVICE_EGRESS_ALLOW_PRIVATE.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { rootCertificates, TLSSocket } from 'node:tls';
import Type from 'typebox';
import { Agent, buildConnector, errors as undiciErrors, type Dispatcher } from 'undici';
import { egressRefusalOf, guardConnector } from '../../../events/egress/connect.js';
import type { SinkResult } from './types.js';

/** The part of an HTTP kind's config that says where and how to connect. */
export interface HttpEndpointConfig {
  url: string;
  tls?: { ca_file?: string; pin_sha256?: string };
  allow_insecure_http?: boolean;
  timeout_ms?: number;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
/** The most of an answer's body a kind reads (receivers' error bodies are small). */
const MAX_ANSWER_BYTES = 1 << 20;

/** A secret reference field (`secret:<name>`; the name pattern of the secrets store). */
export const SECRET_REF = Type.String({ pattern: '^secret:[a-z0-9][a-z0-9._-]{0,99}$', description: 'a secret reference, secret:<name>' });

/** Schema properties of the endpoint part (spread into each kind's `Type.Object`). */
export function endpointProperties(urlDescription: string) {
  return {
    url: Type.String({ minLength: 1, maxLength: 2048, pattern: '^https?://[^\\s]+$', description: urlDescription }),
    tls: Type.Optional(
      Type.Object(
        {
          ca_file: Type.Optional(
            Type.String({ minLength: 1, maxLength: 4096, description: 'PEM file of extra trusted CAs (relative to the data directory)' }),
          ),
          pin_sha256: Type.Optional(
            Type.String({
              pattern: '^([A-Za-z0-9+/]{43}=|[0-9a-fA-F]{64})$',
              description: 'SHA-256 of the receiver certificate SubjectPublicKeyInfo, base64 or hex',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    allow_insecure_http: Type.Optional(
      Type.Boolean({ default: false, description: 'development only: permit http:// to a loopback address' }),
    ),
    timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 300_000, default: DEFAULT_TIMEOUT_MS })),
  };
}

const LOOPBACK = /^(127(?:\.\d{1,3}){3}|\[::1\]|localhost)$/i;

/** Cross-field checks of the endpoint part; messages never contain a secret (URLs with userinfo are refused). */
export function validateEndpoint(c: HttpEndpointConfig): string[] {
  let u: URL;
  try {
    u = new URL(c.url);
  } catch {
    return ['url is not a valid URL'];
  }
  const out: string[] = [];
  if (u.username !== '' || u.password !== '') out.push('url must not carry credentials (use the secret reference fields)');
  if (u.protocol === 'http:') {
    if (c.allow_insecure_http !== true)
      out.push('url must be https:// (http:// needs allow_insecure_http, for a loopback development receiver only)');
    else if (!LOOPBACK.test(u.hostname)) out.push('allow_insecure_http permits only a loopback host (127.0.0.0/8, ::1, localhost)');
    if (c.tls !== undefined) out.push('tls options need an https:// url (a TLS destination is never downgraded)');
  } else if (u.protocol !== 'https:') out.push('url must be https://');
  if (u.hash !== '') out.push('url must not have a #fragment');
  return out;
}

function pinBytes(pin: string): Buffer {
  return /^[0-9a-fA-F]{64}$/.test(pin) ? Buffer.from(pin, 'hex') : Buffer.from(pin, 'base64');
}

function leafSpkiSha256(socket: TLSSocket): Buffer | undefined {
  const raw = socket.getPeerCertificate().raw as Buffer | undefined;
  if (raw === undefined || raw.length === 0) return undefined;
  const spki = new X509Certificate(raw).publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(spki).digest();
}

/** A TLS failure of ours (pin mismatch): never retried silently into a send. */
export class TlsPinError extends Error {
  override readonly name = 'TlsPinError';
  readonly code = 'ERR_TLS_PIN_MISMATCH';
}

/** The undici dispatcher of one connector: trust rules, timeouts, keep-alive. */
export function openDispatcher(c: HttpEndpointConfig, dataDir: string, connections = 4): Agent {
  const timeout = c.timeout_ms ?? DEFAULT_TIMEOUT_MS;
  const caPath = c.tls?.ca_file;
  const ca = caPath === undefined ? undefined : readFileSync(isAbsolute(caPath) ? caPath : join(dataDir, caPath), 'utf8');
  const pin = c.tls?.pin_sha256 === undefined ? undefined : pinBytes(c.tls.pin_sha256);
  const base = buildConnector({
    ...(ca !== undefined ? { ca: [...rootCertificates, ca] } : {}),
    // always explicit, never NODE_TLS_REJECT_UNAUTHORIZED's: a pin without a CA trusts the pinned
    // key instead of a chain (self-signed receivers), checked below before any byte is written
    rejectUnauthorized: !(pin !== undefined && ca === undefined),
    timeout,
    ...(pin !== undefined ? { maxCachedSessions: 0 } : {}),
  });
  const connect: buildConnector.connector =
    pin === undefined
      ? base
      : (opts, callback) =>
          base(opts, (err, socket) => {
            if (err !== null) return callback(err, null);
            if (!(socket instanceof TLSSocket)) return callback(null, socket);
            const got = leafSpkiSha256(socket);
            if (got !== undefined && got.equals(pin)) return callback(null, socket);
            socket.destroy();
            callback(
              new TlsPinError(
                `receiver certificate does not match tls.pin_sha256 (presented ${got === undefined ? 'none' : got.toString('base64')})`,
              ),
              null,
            );
          });
  // the egress guard: every address connected to is checked, and the socket connects to a checked one
  const guarded = guardConnector(connect);
  return new Agent({ connect: guarded, connections, headersTimeout: timeout, bodyTimeout: timeout, keepAliveTimeout: 30_000 });
}

/** One answer, body read up to 1 MiB. */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * POST (or another method) one body; a network or TLS failure throws (see `networkFailure`).
 * undici's `request` never follows redirects: a 3xx is an answer like any other.
 */
export async function send(
  dispatcher: Dispatcher,
  url: string,
  opts: {
    method?: 'POST' | 'PUT' | 'GET';
    headers: Record<string, string>;
    body?: string | Buffer;
    signal: AbortSignal;
    timeoutMs: number;
  },
): Promise<HttpAnswer> {
  // one controller per request, fed by the runtime's signal and our timer (AbortSignal.any and
  // AbortSignal.timeout cost a timer and listeners that outlive the request on Node 20)
  const ac = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ac.abort();
  }, opts.timeoutMs);
  const onAbort = (): void => ac.abort();
  if (opts.signal.aborted) ac.abort();
  else opts.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const u = new URL(url);
    const res = await dispatcher.request({
      origin: u.origin,
      path: `${u.pathname}${u.search}`,
      method: opts.method ?? 'POST',
      headers: opts.headers,
      body: opts.body ?? null,
      signal: ac.signal,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      const b = chunk as Buffer;
      if (size < MAX_ANSWER_BYTES) chunks.push(b.subarray(0, MAX_ANSWER_BYTES - size));
      size += b.length;
    }
    return { status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') };
  } catch (err) {
    if (timedOut) throw new RequestTimeoutError();
    throw err;
  } finally {
    clearTimeout(timer);
    opts.signal.removeEventListener('abort', onAbort);
  }
}

/** No answer within `timeout_ms`. */
export class RequestTimeoutError extends Error {
  override readonly name = 'TimeoutError';
  constructor() {
    super('no answer in time');
  }
}

/** The path and query of a URL, verbatim (no path appended or normalised beyond WHATWG parsing). */
export function pathOf(url: string): string {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
}

/** `Retry-After` (delta-seconds or HTTP-date, RFC 9110 §10.2.3) in ms; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined) return undefined;
  const t = v.trim();
  if (/^\d+$/.test(t)) return Math.min(Number(t), 86_400) * 1000;
  const at = Date.parse(t);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.min(at - now, 86_400_000));
}

/** Network errors, 408, 425, 429 and 5xx are retried; any other non-2xx fails the batch. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || status >= 500;
}

/**
 * The result of an answer that has no body to read further: 2xx delivered; 408/425/429/5xx retry
 * (with `Retry-After`); anything else failed. `detail` is a short, secret-free reading of the body.
 */
export function resultOfStatus(a: HttpAnswer, detail?: string): SinkResult {
  const suffix = detail !== undefined && detail !== '' ? `: ${detail}` : '';
  if (a.status >= 200 && a.status < 300) return { result: 'delivered', status: a.status };
  const retryAfterMs = parseRetryAfter(a.headers['retry-after']);
  if (isRetryableStatus(a.status)) {
    return {
      result: 'retry',
      status: a.status,
      error: `receiver answered ${a.status}${suffix}`,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    };
  }
  const what = a.status >= 300 && a.status < 400 ? ' (redirects are not followed)' : '';
  return { result: 'failed', status: a.status, error: `receiver answered ${a.status}${what}${suffix}` };
}

/** A request that never got an answer (refused, reset, TLS failure, timeout): retried. */
export function networkFailure(err: unknown, signal: AbortSignal): SinkResult {
  if (signal.aborted) return { result: 'retry', error: 'aborted by the runtime' };
  if (err instanceof TlsPinError) return { result: 'retry', error: `tls: ${err.message}` };
  // the egress guard refused the destination: failed with the reason, not retried into the same refusal
  const refused = egressRefusalOf(err);
  if (refused !== null) return { result: 'failed', error: `egress_refused: ${refused}` };
  const e = err as { code?: string; message?: string; name?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError) {
    return { result: 'retry', error: 'no answer in time (timeout_ms)' };
  }
  const code = e?.code ?? e?.cause?.code;
  const message = e?.cause?.message ?? e?.message ?? String(err);
  const tls = typeof code === 'string' && /CERT|TLS|SSL|SELF_SIGNED|HOSTNAME|ERR_TLS/.test(code);
  return { result: 'retry', error: `${tls ? 'tls' : 'network'}: ${code !== undefined ? `${code} ` : ''}${oneLine(message)}` };
}

/** A short single-line excerpt of a receiver's text (for error messages; never our secrets). */
export function oneLine(text: string, max = 300): string {
  const t = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max)}…` : t;
}

/**
 * Lines joined into one UTF-8 buffer, each followed by `sep` (also after the last when `trailing`).
 * Writing into one allocation is an order of magnitude cheaper than `Array.join` of large lines
 * followed by the string's UTF-8 encoding at send time.
 */
export function joinLines(lines: readonly string[], sep = '\n', trailing = true): Buffer {
  const sepBytes = Buffer.byteLength(sep);
  let n = 0;
  for (const l of lines) n += Buffer.byteLength(l, 'utf8') + sepBytes;
  if (!trailing && lines.length > 0) n -= sepBytes;
  const out = Buffer.allocUnsafe(n);
  let o = 0;
  for (let i = 0; i < lines.length; i++) {
    o += out.write(lines[i] as string, o, 'utf8');
    if (trailing || i < lines.length - 1) o += out.write(sep, o, 'utf8');
  }
  return out;
}

/** The `User-Agent` every HTTP kind sends. */
export function userAgent(version: string): string {
  return `svc-connector/${version}`;
}
