/**
 * What the connector-kind tests share: real HTTPS receivers on loopback (certificates made by the
 * openssl CLI), a kind context whose secrets live in the real sealed secrets store on a SQLite
 * file, and items made by encoding real sealed ledger records and egress events with the shared
 * encoders, the way the runtime does.
 */
import { createServer as createHttpsServer } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deleteSecret, putSecret, resolveSecret } from '../../../../src/core/console/secrets-service.js';
import type { KindContext, SinkItem } from '../../../../src/core/connectors/kinds/types.js';
import type { EgressEvent, Encoder } from '../../../../src/encoders/encoder.js';
import { encoderFor, type Surface } from '../../../../src/encoders/registry.js';
import type { AuditRecord } from '../../../../src/ledger/record.js';
import { loadSealer } from '../../../../src/secrets/sealing.js';
import { buildChain, newSigner } from '../../../ledger/fixtures.js';
import { createSqliteTestStore, type TestStore } from '../../../helpers/stores.js';
import { makeCert, type TestCert } from '../../../cli/harness.js';

export { makeCert, type TestCert };

// The receivers are on loopback: the egress guard allows loopback only under the development flag
// (inherited by the servers the tests start).
process.env['SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS'] = 'true';


export const DEVICE = { vendor: 'svc', product: 'control-plane', version: '0.1.0-test' };

/** A request as the receiver got it. */
export interface Got {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export type Handler = (req: Got, res: ServerResponse) => void | Promise<void>;

/** A real HTTPS receiver on 127.0.0.1; the test swaps `handler` between steps. */
export interface Receiver {
  url: string;
  port: number;
  got: Got[];
  handler: Handler;
  /** TLS connections that completed a handshake */
  secureConnections(): number;
  /** bytes of request bodies received (0 means nothing of ours reached it) */
  bodyBytes(): number;
  close(): Promise<void>;
}

export function answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(text);
}

export async function startReceiver(cert: TestCert, handler: Handler, port = 0): Promise<Receiver> {
  const got: Got[] = [];
  let secure = 0;
  let bytes = 0;
  const r: Receiver = {
    url: '',
    port: 0,
    got,
    handler,
    secureConnections: () => secure,
    bodyBytes: () => bytes,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
  const server: Server = createHttpsServer({ cert: cert.certPem, key: cert.keyPem }, (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      bytes += c.length;
      chunks.push(c);
    });
    req.on('end', () => {
      const g: Got = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
      got.push(g);
      void Promise.resolve(r.handler(g, res)).catch((err: unknown) => answer(res, 500, { error: String(err) }));
    });
  });
  server.on('secureConnection', () => (secure += 1));
  await new Promise<void>((ok) => server.listen(port, '127.0.0.1', ok));
  r.port = (server.address() as AddressInfo).port;
  r.url = `https://127.0.0.1:${r.port}`;
  return r;
}

/** A kind context over the real sealed secrets store (SQLite), with helpers to set and delete secrets. */
export interface SecretsCtx {
  ctx: KindContext;
  set(name: string, value: string): Promise<void>;
  remove(name: string): Promise<void>;
  /** every value ever set, to assert none leaks into errors */
  values: string[];
  dispose(): Promise<void>;
}

export async function secretsContext(): Promise<SecretsCtx> {
  const ts: TestStore = await createSqliteTestStore();
  await ts.store.migrate();
  const sealer = await loadSealer(ts.config.dataDir, {});
  const values: string[] = [];
  const warnings: object[] = [];
  return {
    ctx: {
      secret: (ref) => resolveSecret(ts.store, sealer, ref),
      dataDir: ts.config.dataDir,
      version: DEVICE.version,
      log: { warn: (o) => void warnings.push(o), info: () => undefined },
    },
    async set(name, value) {
      values.push(value);
      await putSecret(ts.store, sealer, name, value);
    },
    async remove(name) {
      await deleteSecret(ts.store, name);
    },
    values,
    dispose: () => ts.dispose(),
  };
}

/** A fresh chain of real sealed, signed ledger records, and its signer. */
export function ledger(count: number) {
  const signer = newSigner('ed25519');
  const records = buildChain(signer, count, { checkpointEvery: 0 });
  return { signer, records };
}

/** Ledger records as the runtime's forwarder makes items: encoded with the connector's format. */
export function recordItems(records: readonly AuditRecord[], enc: Encoder): SinkItem[] {
  return records.map((r) => ({
    line: enc.encodeRecord(r, { device: DEVICE }),
    id: `${r.tenant}:${r.seq}`,
    tenant: r.tenant,
    seq: r.seq,
    time: r.occurred_at,
  }));
}

/** Ledger records encoded with the token of a surface (`encoderFor`, as the runtime resolves it). */
export function recordItemsAs(records: readonly AuditRecord[], surface: Surface, token: string): SinkItem[] {
  return recordItems(records, encoderFor(surface, token));
}

/** Notification events (findings and alerts), as the bus hands them to notification connectors. */
export function events(count: number, tenant = '01970c2e-4b1a-7c3d-8e4f-5a6b7c8d9e0f'): EgressEvent[] {
  const sev = ['info', 'low', 'medium', 'high', 'critical'] as const;
  return Array.from({ length: count }, (_, i) => ({
    id: `evt-${String(i).padStart(4, '0')}`,
    type: i % 2 === 0 ? 'finding.created' : 'policy.violation',
    time: new Date(Date.UTC(2026, 10, 27, 12, 0, i)).toISOString(),
    severity: sev[i % sev.length] as EgressEvent['severity'],
    tenant,
    title: `event ${i}: "quoted" ünïcödé`,
    fields: { agent: `agent-${i}`, n: i, ok: i % 3 === 0 },
  }));
}

export function eventItems(evs: readonly EgressEvent[], surface: Surface, token: string): SinkItem[] {
  const enc = encoderFor(surface, token);
  if (enc.encodeEvent === undefined) throw new Error(`${token} does not encode events`);
  const encode = enc.encodeEvent.bind(enc);
  return evs.map((e) => ({
    line: encode(e, { device: DEVICE }),
    id: e.id,
    tenant: e.tenant ?? '',
    ...(e.time !== undefined ? { time: e.time } : {}),
  }));
}

/** An unused loopback port (listen, read, close). */
export async function deadPort(): Promise<number> {
  const { createServer } = await import('node:net');
  const s = createServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((ok) => s.close(() => ok()));
  return port;
}

export const signal = (): AbortSignal => new AbortController().signal;
