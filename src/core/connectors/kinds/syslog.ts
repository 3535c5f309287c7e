/**
 * `syslog`: RFC 5424 records to a syslog receiver (spec: syslog rules 1–3). TLS on 6514 with
 * octet-counting framing (RFC 5425, RFC 6587 §3.4.1) is the default and the server certificate is
 * always verified (`ca_file`, or the system roots, or `pin_sha256` of its public key); cleartext TCP
 * (octet counting or LF framing, RFC 6587) and UDP (one record per datagram, RFC 5426) only with
 * `allow_cleartext: true`, and never towards a TLS destination (port 6514, or a `ca_file`/`pin_sha256`
 * given). `max_payload_bytes` (0 = off) bounds the complete record in UTF-8 octets: a longer record is
 * refused (the runtime retries it, then dead-letters it), never truncated or sent.
 *
 * One persistent connection per connector, opened on the first batch, reopened after a failure with
 * an exponential backoff (0.25 s doubling to 30 s). Syslog over TCP has no application-level
 * acknowledgement: a batch counts as delivered once the kernel took every byte and the connection
 * was still open afterwards; a receiver that drops the connection at that very moment can lose what
 * was in flight (RFC 6587's limit; docs/connectors.md "Delivery guarantees").
 */
import { createHash, X509Certificate } from 'node:crypto';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { isAbsolute, join } from 'node:path';
import tls from 'node:tls';
import Type, { type Static } from 'typebox';
import { Text } from '../../../contract/common.js';
import { checkPayloadBudget, SyslogPayloadTooLargeError } from '../../../encoders/syslog.js';
import { checkLiteral, connectAddresses, egressRefusalOf, guardedLookup } from '../../../events/egress/connect.js';
import type { ConnectorKind, ConnectorSink, KindContext, SinkItem, SinkResult } from './types.js';

export const SYSLOG_TLS_PORT = 6514;

export const SyslogConfig = Type.Object(
  {
    host: Text({ minLength: 1, maxLength: 253, description: 'receiver host name or address' }),
    port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, description: 'default 6514 with TLS, 514 otherwise' })),
    transport: Type.Optional(
      Type.Union([Type.Literal('tls'), Type.Literal('tcp'), Type.Literal('udp')], {
        description: 'default tls; tcp and udp need allow_cleartext',
      }),
    ),
    framing: Type.Optional(
      Type.Union([Type.Literal('octet_counting'), Type.Literal('lf')], {
        description: 'TCP framing (RFC 6587); TLS is always octet counting',
      }),
    ),
    allow_cleartext: Type.Optional(Type.Boolean({ description: 'the explicit opt-out that permits tcp or udp' })),
    ca_file: Type.Optional(
      Text({
        minLength: 1,
        maxLength: 4096,
        description: 'PEM CA bundle the server certificate must chain to (relative: to the data directory)',
      }),
    ),
    pin_sha256: Type.Optional(
      Type.String({ pattern: '^[A-Za-z0-9+/]{43}=$', description: 'base64 SHA-256 of the server public key (SPKI); trusted by key alone' }),
    ),
    server_name: Type.Optional(
      Text({ minLength: 1, maxLength: 253, description: 'TLS SNI and the name checked in the certificate (default host)' }),
    ),
    client_cert_file: Type.Optional(Text({ minLength: 1, maxLength: 4096, description: 'PEM client certificate for mutual TLS' })),
    client_key: Type.Optional(
      Type.String({ pattern: '^secret:[a-z0-9][a-z0-9._-]{0,99}$', description: 'secret reference to the PEM client key' }),
    ),
    max_payload_bytes: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 16 * 1024 * 1024,
        description: 'receiver budget in UTF-8 octets of the complete record; 0 = off',
      }),
    ),
    connect_timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 120_000 })),
  },
  { additionalProperties: false },
);
export type SyslogConfig = Static<typeof SyslogConfig>;

function validate(c: SyslogConfig): string[] {
  const out: string[] = [];
  const transport = c.transport ?? 'tls';
  if (transport !== 'tls') {
    if (c.allow_cleartext !== true) out.push(`transport ${transport} is cleartext: set allow_cleartext: true to opt out of TLS explicitly`);
    if (c.port === SYSLOG_TLS_PORT)
      out.push(`port ${SYSLOG_TLS_PORT} is the syslog-over-TLS port: a TLS destination is never downgraded to ${transport}`);
    if (c.ca_file !== undefined || c.pin_sha256 !== undefined || c.client_cert_file !== undefined || c.client_key !== undefined)
      out.push(`ca_file, pin_sha256 and client certificates describe a TLS destination: it is never downgraded to ${transport}`);
    if (transport === 'udp' && c.framing !== undefined)
      out.push('framing applies to TCP only (UDP carries one record per datagram, RFC 5426)');
  } else {
    if (c.allow_cleartext === true) out.push('allow_cleartext is meaningless with transport tls (leave it out)');
    if (c.framing === 'lf') out.push('TLS uses octet-counting framing (RFC 5425); lf is for cleartext TCP only');
  }
  if ((c.client_cert_file === undefined) !== (c.client_key === undefined)) out.push('client_cert_file and client_key go together');
  return out;
}

function spkiPin(cert: tls.PeerCertificate): string {
  const spki = new X509Certificate(cert.raw).publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(spki).digest('base64');
}

type Stream = net.Socket | tls.TLSSocket;

/** Bytes of one socket write while a batch is framed. */
const CHUNK_BYTES = 256 * 1024;

/** Writes `line` LF (RFC 6587 §3.4.2) at `off`, which has room; returns the end. */
function frameLf(buf: Buffer, off: number, line: string): number {
  const end = off + buf.write(line, off, 'utf8');
  buf[end] = 0x0a;
  return end + 1;
}

/**
 * Writes the octet-counting frame `MSG-LEN SP line` (RFC 6587 §3.4.1) at `off`, which has room;
 * returns the end. The line goes in first, after as many digits as its UTF-16 length has (its UTF-8
 * length is at least that), and moves right in the rare case its octet count has more digits.
 */
function frameOctetCounted(buf: Buffer, off: number, line: string): number {
  const guess = decimalDigits(line.length) + 1;
  const n = buf.write(line, off + guess, 'utf8');
  const prefix = String(n) + ' ';
  if (prefix.length !== guess) buf.copyWithin(off + prefix.length, off + guess, off + guess + n);
  buf.write(prefix, off, 'latin1');
  return off + prefix.length + n;
}

function decimalDigits(n: number): number {
  let d = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    d++;
  }
  return d;
}

class SyslogSink implements ConnectorSink {
  readonly #c: SyslogConfig;
  readonly #ctx: KindContext;
  readonly #transport: 'tls' | 'tcp' | 'udp';
  readonly #port: number;
  readonly #budget: number;
  #stream: Stream | undefined;
  #broken = false;
  #udp: UdpSocket | undefined;
  #udpFamily: 'udp4' | 'udp6' | undefined;
  #failures = 0;
  #nextTryAt = 0;

  constructor(c: SyslogConfig, ctx: KindContext) {
    this.#c = c;
    this.#ctx = ctx;
    this.#transport = c.transport ?? 'tls';
    this.#port = c.port ?? (this.#transport === 'tls' ? SYSLOG_TLS_PORT : 514);
    this.#budget = c.max_payload_bytes ?? 0;
  }

  check(item: SinkItem): string | undefined {
    try {
      checkPayloadBudget(item.line, this.#budget);
      return undefined;
    } catch (err) {
      if (err instanceof SyslogPayloadTooLargeError)
        return `record ${item.id} is ${err.size} octets, over max_payload_bytes ${err.limit}; not sent (never truncated)`;
      throw err;
    }
  }

  async send(items: readonly SinkItem[], signal: AbortSignal): Promise<SinkResult> {
    // Refused before a byte goes out: a batch never carries an over-budget record.
    for (const it of items) {
      const why = this.check(it);
      if (why !== undefined) return { result: 'retry', error: why };
    }
    const wait = this.#nextTryAt - Date.now();
    if (wait > 0) return { result: 'retry', error: 'receiver unreachable; reconnecting with backoff', retryAfterMs: wait };
    try {
      if (this.#transport === 'udp') await this.#sendUdp(items);
      else await this.#sendStream(items, signal);
      this.#failures = 0;
      return { result: 'delivered' };
    } catch (err) {
      this.#drop();
      // the egress guard refused the destination: failed with the reason, never retried into the same refusal
      const refused = egressRefusalOf(err);
      if (refused !== null) return { result: 'failed', error: `egress_refused: ${refused}` };
      this.#failures++;
      const backoff = Math.min(250 * 2 ** Math.min(this.#failures - 1, 7), 30_000);
      this.#nextTryAt = Date.now() + backoff;
      return {
        result: 'retry',
        error: `syslog ${this.#transport} ${this.#c.host}:${this.#port}: ${(err as Error).message}`,
        retryAfterMs: backoff,
      };
    }
  }

  async #sendUdp(items: readonly SinkItem[]): Promise<void> {
    // resolved and checked once per batch; every datagram goes to that checked address
    const [to] = await connectAddresses(this.#c.host, this.#port);
    const family = to?.family === 6 ? 'udp6' : 'udp4';
    if (this.#udp === undefined || this.#udpFamily !== family) {
      this.#udp?.close();
      this.#udp = createSocket(family);
      this.#udpFamily = family;
    }
    const udp = this.#udp;
    for (const it of items) {
      await new Promise<void>((resolve, reject) =>
        udp.send(Buffer.from(it.line, 'utf8'), this.#port, to?.address, (err) => (err ? reject(err) : resolve())),
      );
    }
  }

  async #sendStream(items: readonly SinkItem[], signal: AbortSignal): Promise<void> {
    // Let a FIN or RST that already arrived mark the connection broken before we write into it.
    await new Promise((r) => setImmediate(r));
    if (this.#broken) this.#drop();
    const s = this.#stream ?? (this.#stream = await this.#connect());
    const lf = this.#transport === 'tcp' && this.#c.framing === 'lf';
    // Frames are written straight into one Buffer per chunk: no Buffer, string copy or length scan per record.
    let buf = Buffer.allocUnsafe(CHUNK_BYTES);
    let off = 0;
    const flush = async (): Promise<void> => {
      if (off === 0) return;
      const out = buf.subarray(0, off);
      off = 0;
      await new Promise<void>((resolve, reject) => {
        if (this.#broken) return reject(new Error('connection closed by the receiver'));
        const ok = s.write(out, (err) => (err ? reject(err) : undefined));
        if (ok) resolve();
        else {
          const onDrain = (): void => {
            s.off('close', onClose);
            resolve();
          };
          const onClose = (): void => {
            s.off('drain', onDrain);
            reject(new Error('connection closed by the receiver'));
          };
          s.once('drain', onDrain);
          s.once('close', onClose);
        }
      });
    };
    for (const it of items) {
      if (signal.aborted) throw new Error('aborted');
      const line = it.line;
      // 3 octets per UTF-16 unit bound the line; 11 more bound `MSG-LEN SP` (or the LF).
      const room = line.length * 3 + 11;
      if (off + room > buf.length) {
        await flush();
        // The socket may still hold the flushed bytes: the next chunk is a new Buffer.
        buf = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, room));
      }
      off = lf ? frameLf(buf, off, line) : frameOctetCounted(buf, off, line);
    }
    await flush();
    // Every byte reached the kernel; the connection must still be open once the event loop had a turn.
    await new Promise<void>((resolve, reject) => s.write(Buffer.alloc(0), (err) => (err ? reject(err) : resolve())));
    await new Promise((r) => setImmediate(r));
    if (this.#broken) throw new Error('connection closed by the receiver during the batch');
  }

  async #connect(): Promise<Stream> {
    this.#broken = false;
    const timeout = this.#c.connect_timeout_ms ?? 10_000;
    const host = this.#c.host;
    // the egress guard: a literal address is checked here, every address a name resolves to by the lookup
    await checkLiteral(host, this.#port);
    const lookup = guardedLookup(this.#port);
    const stream = await new Promise<Stream>((resolve, reject) => {
      let s: Stream;
      const timer = setTimeout(() => {
        s.destroy();
        reject(new Error(`no connection within ${timeout} ms`));
      }, timeout);
      const fail = (err: Error): void => {
        clearTimeout(timer);
        reject(err);
      };
      if (this.#transport === 'tcp') {
        s = net.connect({ host, port: this.#port, lookup }, () => {
          clearTimeout(timer);
          resolve(s);
        });
        s.once('error', fail);
        return;
      }
      void this.#tlsOptions().then((opts) => {
        const t = tls.connect({ host, port: this.#port, lookup, ...opts }, () => {
          clearTimeout(timer);
          if (this.#c.pin_sha256 !== undefined) {
            const got = spkiPin(t.getPeerCertificate(false));
            if (got !== this.#c.pin_sha256) {
              t.destroy();
              return reject(new Error(`receiver key does not match pin_sha256 (got ${got}); nothing sent`));
            }
          }
          resolve(t);
        });
        s = t;
        t.once('error', fail);
        // tls.connect throws synchronously on a key or certificate it cannot load (bad PEM): a failed
        // attempt of this batch, never an unhandled rejection that ends the process.
      }).catch(fail);
    });
    stream.setNoDelay(true);
    stream.setKeepAlive(true, 30_000);
    stream.removeAllListeners('error');
    const mark = (): void => void (this.#broken = true);
    stream.on('error', mark);
    stream.on('end', mark);
    stream.on('close', mark);
    // A receiver sends nothing on a syslog connection; anything it does send is read and ignored.
    stream.on('data', () => undefined);
    return stream;
  }

  async #tlsOptions(): Promise<tls.ConnectionOptions> {
    const file = (f: string): Buffer => readFileSync(isAbsolute(f) ? f : join(this.#ctx.dataDir, f));
    const o: tls.ConnectionOptions = {
      servername: this.#c.server_name ?? (net.isIP(this.#c.host) ? undefined : this.#c.host),
      minVersion: 'TLSv1.2',
    };
    if (this.#c.ca_file !== undefined) o.ca = file(this.#c.ca_file);
    // Always explicit, never NODE_TLS_REJECT_UNAUTHORIZED's. Pinned: trusted by its key alone
    // (checked on connect, before any record goes out).
    o.rejectUnauthorized = this.#c.pin_sha256 === undefined;
    if (this.#c.pin_sha256 === undefined && this.#c.server_name !== undefined)
      o.checkServerIdentity = (_h, cert) => tls.checkServerIdentity(this.#c.server_name as string, cert);
    if (this.#c.client_cert_file !== undefined && this.#c.client_key !== undefined) {
      o.cert = file(this.#c.client_cert_file);
      // Read now, every connect: a deleted secret fails closed (SecretUnavailableError) before connecting.
      o.key = await this.#ctx.secret(this.#c.client_key);
    }
    return o;
  }

  #drop(): void {
    this.#stream?.destroy();
    this.#stream = undefined;
    this.#broken = false;
  }

  async close(): Promise<void> {
    const s = this.#stream;
    this.#stream = undefined;
    if (s) await new Promise<void>((resolve) => s.end(() => resolve()));
    this.#udp?.close();
    this.#udp = undefined;
  }
}

export const syslogKind: ConnectorKind<SyslogConfig> = {
  kind: 'syslog',
  format: { surface: 'syslog_connector' },
  configSchema: SyslogConfig,
  secretFields: ['client_key'],
  validate,
  maxBatch: 5000,
  open: async (config, ctx) => new SyslogSink(config, ctx),
};
