/**
 * One decision request over node:tls + node:http, nothing else loaded. Trust as the general client
 * (client/trust.ts): `--insecure` none; pins without a CA replace chain validation and are checked
 * before a byte of the request is written; `--ca-cert` validates the chain (that CA first, so the
 * system store — ~140 certificates parsed at every start — is loaded only if the chain needs it);
 * neither: the system store. The answer is read up to a byte bound; the request is cut at the deadline.
 */
import type { ClientRequest, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionOptions, TLSSocket } from 'node:tls';
import type { HookTarget } from './config.js';
import { HookFailure } from './failure.js';

const PATH = '/v1/m/governance/pep/decisions';
const CHAIN_CODES = new Set(['UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'UNABLE_TO_GET_ISSUER_CERT', 'SELF_SIGNED_CERT_IN_CHAIN']);

/** POSTs `body` and returns the parsed JSON answer of a 2xx; everything else throws a {@link HookFailure}. */
export async function decide(t: HookTarget, body: string, o: { deadline: number; maxBytes: number }): Promise<unknown> {
  const host = t.server.hostname.replace(/^\[|\]$/g, '');
  const port = Number(t.server.port || (t.server.protocol === 'https:' ? 443 : 80));
  let socket: Socket;
  if (t.server.protocol === 'http:') {
    if (t.token !== undefined && !t.allowCleartext && !isLoopback(host))
      throw new HookFailure('refusing to send the credential over plain http to a non-loopback server');
    const net = await import('node:net');
    socket = net.connect({ host, port });
  } else {
    try {
      socket = await connectTls(t, host, port, false, o.deadline);
    } catch (err) {
      if (!(t.caCertPem !== undefined && CHAIN_CODES.has((err as { code?: string }).code ?? ''))) throw err;
      socket = await connectTls(t, host, port, true, o.deadline);
    }
  }
  const { request } = await import('node:http');
  const headers: Record<string, string> = {
    host: t.server.host,
    accept: 'application/json',
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    'user-agent': 'svc-claude-hook',
    connection: 'close',
  };
  if (t.token !== undefined) headers.authorization = `Bearer ${t.token}`;
  if (t.tenant !== undefined) headers['x-service-tenant'] = t.tenant;
  const path = `${t.server.pathname.replace(/\/+$/, '')}${PATH}`;
  return await new Promise<unknown>((resolve, reject) => {
    let req: ClientRequest | undefined;
    const fail = (why: string): void => {
      clearTimeout(timer);
      req?.destroy();
      socket.destroy();
      reject(new HookFailure(why));
    };
    const timer = setTimeout(() => fail('no decision before the deadline'), Math.max(1, o.deadline - Date.now()));
    req = request({ method: 'POST', path, headers, createConnection: () => socket }, (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      const declared = Number(res.headers['content-length'] ?? '0');
      if (declared > o.maxBytes) return fail(`the answer exceeds ${o.maxBytes} bytes`);
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > o.maxBytes) fail(`the answer exceeds ${o.maxBytes} bytes`);
        else chunks.push(c);
      });
      res.on('error', () => fail('the answer was cut off'));
      res.on('end', () => {
        if (size > o.maxBytes) return;
        clearTimeout(timer);
        socket.destroy();
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown;
        const json = /\bjson\b/i.test(String(res.headers['content-type'] ?? ''));
        try {
          parsed = json ? JSON.parse(text) : undefined;
        } catch {
          parsed = undefined;
        }
        if (status < 200 || status >= 300) {
          const code = (parsed as { error?: { code?: unknown } } | undefined)?.error?.code;
          return reject(
            new HookFailure(`the decision endpoint answered HTTP ${status}${typeof code === 'string' ? ` ${code.slice(0, 60)}` : ''}`),
          );
        }
        if (parsed === undefined) return reject(new HookFailure('malformed answer from the decision endpoint'));
        resolve(parsed);
      });
    });
    req.on('error', (err: NodeJS.ErrnoException) => fail(transportReason(err)));
    req.end(body);
  });
}

async function connectTls(t: HookTarget, host: string, port: number, systemToo: boolean, deadline: number): Promise<TLSSocket> {
  const tls = await import('node:tls');
  const pinning = t.pins.length > 0 && !t.insecure;
  const verifyChain = !t.insecure && !(pinning && t.caCertPem === undefined);
  const options: ConnectionOptions = { host, port, rejectUnauthorized: verifyChain, ALPNProtocols: ['http/1.1'] };
  if (!/^[\d.]+$/.test(host) && !host.includes(':')) options.servername = host;
  // An explicit `ca` keeps Node from loading its whole root store; without verification none is needed.
  if (!verifyChain) options.ca = [];
  else if (t.caCertPem !== undefined) options.ca = systemToo ? [...tls.rootCertificates, t.caCertPem] : [t.caCertPem];
  return await new Promise<TLSSocket>((resolve, reject) => {
    const socket = tls.connect(options);
    const timer = setTimeout(
      () => done(new HookFailure('no decision before the deadline (no TLS connection yet)')),
      Math.max(1, deadline - Date.now()),
    );
    const done = (err: Error | undefined): void => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      if (err === undefined) return resolve(socket);
      socket.destroy();
      reject(err);
    };
    socket.once('error', (err: NodeJS.ErrnoException) => done(Object.assign(new HookFailure(transportReason(err)), { code: err.code })));
    socket.once('secureConnect', () => {
      if (!pinning) return done(undefined);
      void leafPin(socket).then((pin) =>
        done(
          pin !== undefined && t.pins.some((p) => p.equals(pin))
            ? undefined
            : new HookFailure('TLS failure: the server certificate matches no pin'),
        ),
      );
    });
  });
}

async function leafPin(socket: TLSSocket): Promise<Buffer | undefined> {
  const raw = socket.getPeerCertificate().raw as Buffer | undefined;
  if (raw === undefined || raw.length === 0) return undefined;
  const { X509Certificate, createHash } = await import('node:crypto');
  return createHash('sha256')
    .update(new X509Certificate(raw).publicKey.export({ type: 'spki', format: 'der' }))
    .digest();
}

function transportReason(err: NodeJS.ErrnoException): string {
  const code = err.code ?? '';
  if (/^(ERR_TLS_|ERR_SSL_|UNABLE_TO_|CERT_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_|ERR_OSSL_)/.test(code)) return `TLS failure (${code})`;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH' || code === 'ECONNRESET' || code === 'EAI_AGAIN')
    return `the server is unreachable (${code})`;
  return `the server is unreachable (${code || 'connection failed'})`;
}

function isLoopback(host: string): boolean {
  const h = host.toLowerCase();
  return h === 'localhost' || /^127\./.test(h) || h === '::1' || /^::ffff:(127\.|7f[0-9a-f]{2}:)/.test(h);
}
