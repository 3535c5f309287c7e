/** Prometheus metrics (prom-client) on a private registry: HTTP traffic, engine, process. */
import { Registry, Counter, Histogram, Gauge, collectDefaultMetrics } from 'prom-client';
import type { HttpObserver, HttpEngine } from '../http/engine.js';
import type { Ed25519EngineName } from '../ledger/ed25519-engine.js';

export interface Metrics {
  registry: Registry;
  http: HttpObserver;
  setEngine(engine: HttpEngine): void;
  /** the Ed25519 engine the ledger signs and verifies with (ledger/ed25519-engine.ts) */
  setCryptoEngine(engine: Ed25519EngineName): void;
  render(): Promise<string>;
  contentType: string;
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Create the registry and its collectors. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'svc_' });
  // prom-client names three gauges `*_total`, which Prometheus reserves for counters (promtool
  // lints it). The per-type gauges `svc_nodejs_active_{handles,requests,resources}` carry the same counts.
  for (const name of ['svc_nodejs_active_handles_total', 'svc_nodejs_active_requests_total', 'svc_nodejs_active_resources_total'])
    registry.removeSingleMetric(name);
  const requests = new Counter({
    name: 'svc_http_requests_total',
    help: 'HTTP requests answered, by route template, method and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'Time from request to the last byte written, by route template, method and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const inFlight = new Gauge({ name: 'svc_http_requests_in_flight', help: 'HTTP requests being handled now.', registers: [registry] });
  const aborted = new Counter({
    name: 'svc_http_requests_aborted_total',
    help: 'HTTP requests whose client went away before the answer was complete.',
    registers: [registry],
  });
  const engineInfo = new Gauge({
    name: 'svc_http_engine_info',
    help: 'The HTTP engine serving requests (uws-native, or uws-fallback: the slow pure-Node engine).',
    labelNames: ['engine'] as const,
    registers: [registry],
  });
  const cryptoInfo = new Gauge({
    name: 'svc_crypto_engine_info',
    help: 'The Ed25519 engine of the audit ledger (libsodium, or openssl: node:crypto).',
    labelNames: ['engine'] as const,
    registers: [registry],
  });
  const children = new Map<string, { count: { inc(): void }; time: { observe(v: number): void } }>();
  return {
    registry,
    contentType: registry.contentType,
    setEngine: (engine) => {
      engineInfo.reset();
      engineInfo.set({ engine }, 1);
    },
    setCryptoEngine: (engine) => {
      cryptoInfo.reset();
      cryptoInfo.set({ engine }, 1);
    },
    render: () => registry.metrics(),
    http: {
      started: () => inFlight.inc(),
      finished: (e) => {
        inFlight.dec();
        // Label sets are bounded (route templates × methods × statuses): cache the bound children
        // so the hot path skips prom-client's label hashing.
        // A client picks the method: anything unusual becomes OTHER so it cannot mint label sets.
        const method = METHODS.has(e.method) ? e.method : 'OTHER';
        const key = `${method} ${e.route} ${e.status}`;
        let bound = children.get(key);
        if (!bound) {
          const labels = { method, route: e.route, status: String(e.status) };
          bound = { count: requests.labels(labels), time: duration.labels(labels) };
          children.set(key, bound);
        }
        bound.count.inc();
        bound.time.observe(e.durationMs / 1000);
        if (e.aborted) aborted.inc();
      },
    },
  };
}
