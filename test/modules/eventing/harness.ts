/**
 * Eventing over a real store without a socket for the API (app.request) but with real HTTP for the
 * webhooks: the identity, agent and eventing routes, the bus, the sealer and the delivery engine,
 * and a loopback receiver that checks every delivery with the `standardwebhooks` package (not ours).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import { App } from '../../../src/http/app.js';
import { RecordingAuditSink } from '../../../src/ledger/audit-sink.js';
import type { Services } from '../../../src/serve/services.js';
import type { Store } from '../../../src/store/store.js';
import { IdentityRuntime } from '../../../src/auth/runtime.js';
import { createAuthenticator } from '../../../src/auth/authenticator.js';
import { identityRoutes } from '../../helpers/identity-routes.js';
import { healthRoutes } from '../../../src/core/health/routes.js';
import { agentRoutes } from '../../../src/core/agents/routes.js';
import { accessmapRoutes } from '../../../src/modules/accessmap/routes.js';
import { startIdentity } from '../../../src/core/setup/startup.js';
import { EventBus } from '../../../src/events/bus.js';
import { registerBus } from '../../../src/events/bus-registry.js';
import { eventCatalog } from '../../../src/routes.js';
import { eventingManifest } from '../../../src/modules/eventing/index.js';
import { EventingRuntime } from '../../../src/modules/eventing/runtime.js';
import { Sealer } from '../../../src/secrets/sealing.js';
import { FAST_PASSWORDS, type Harness } from '../../auth/harness.js';

export interface EventingHarness extends Harness {
  bus: EventBus;
  eventing: EventingRuntime;
  logs: Array<Record<string, unknown>>;
}

export async function createEventingHarness(store: Store): Promise<EventingHarness> {
  process.env['SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS'] = 'true';
  const dataDir = await mkdtemp(path.join(tmpdir(), 'svc-eventing-'));
  const routes = [...healthRoutes, ...identityRoutes, ...agentRoutes, ...accessmapRoutes, ...eventingManifest.routes];
  const runtime = new IdentityRuntime({ store, dataDir, routes, passwordParams: FAST_PASSWORDS });
  const audit = new RecordingAuditSink();
  const logs: Array<Record<string, unknown>> = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) });
  const bus = new EventBus({ catalog: eventCatalog(), log });
  registerBus(store, bus);
  const sealer = new Sealer(randomBytes(32));
  const eventing = new EventingRuntime({ store, sealer, bus, log, version: 'test', rules: () => runtime.catalog, pollMs: 200 });
  const services = {
    store,
    audit,
    dataDir,
    log,
    identity: runtime,
    events: bus,
    sealer,
    eventing,
    setupRequired: () => runtime.setupRequired(),
  } as unknown as Services;
  const printed: string[] = [];
  await startIdentity(runtime, { audit, seedDemo: false, print: (t) => printed.push(t), log });
  await eventing.start();
  const app = new App({
    routes,
    services,
    log,
    tls: true,
    bodyLimit: 64 * 1024,
    timeoutMs: 10_000,
    setupRequired: () => runtime.setupRequired(),
    authenticate: createAuthenticator(),
    validateResponses: true,
  });
  return {
    app,
    runtime,
    audit,
    store,
    dataDir,
    printed,
    bus,
    eventing,
    logs,
    call: (method, target, init = {}) => {
      const headers: Record<string, string> = { ...(init.headers ?? {}) };
      if (init.token) headers['authorization'] = `Bearer ${init.token}`;
      if (init.tenant) headers['x-service-tenant'] = init.tenant;
      return app.request(method, target, { body: init.body, headers });
    },
    dispose: async () => {
      await eventing.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** One delivery as the receiver saw it. */
export interface Received {
  path: string;
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  headers: http.IncomingHttpHeaders;
  /** what the receiver answered */
  answered: number;
}

/**
 * A loopback receiver. `behave(path, n)` (n: how many requests that path had, from 1) picks the
 * answer: a status, `{status, headers}`, or 'hang' (never answers).
 */
export async function startReceiver(
  behave: (path: string, n: number) => number | { status: number; headers?: Record<string, string>; delayMs?: number } | 'hang' = () => 200,
) {
  const got: Received[] = [];
  const counts = new Map<string, number>();
  const hanging: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const p = req.url ?? '/';
      const n = (counts.get(p) ?? 0) + 1;
      counts.set(p, n);
      const b = behave(p, n);
      const answer = b === 'hang' ? 0 : typeof b === 'number' ? { status: b } : b;
      got.push({
        path: p,
        id: String(req.headers['webhook-id']),
        timestamp: String(req.headers['webhook-timestamp']),
        signature: String(req.headers['webhook-signature']),
        body: Buffer.concat(chunks).toString('utf8'),
        headers: req.headers,
        answered: answer === 0 ? 0 : answer.status,
      });
      if (answer === 0) return void hanging.push(res);
      const reply = () => void res.writeHead(answer.status, answer.headers ?? {}).end();
      if (answer.delayMs) setTimeout(reply, answer.delayMs);
      else reply();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (p: string) => `http://127.0.0.1:${port}${p}`,
    got,
    /** the deliveries of one path the receiver answered with 2xx */
    delivered: (p: string) => got.filter((g) => g.path === p && g.answered >= 200 && g.answered < 300),
    close: async () => {
      for (const r of hanging) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Verifies one received delivery with the standardwebhooks package; returns the parsed payload or throws. */
export function verify(secret: string, r: Pick<Received, 'id' | 'timestamp' | 'signature' | 'body'>): Record<string, unknown> {
  return new Webhook(secret).verify(r.body, {
    'webhook-id': r.id,
    'webhook-timestamp': r.timestamp,
    'webhook-signature': r.signature,
  }) as Record<string, unknown>;
}

/** Polls `check` until it returns true (or throws after `ms`). */
export async function waitFor(check: () => boolean | Promise<boolean>, ms = 15_000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
