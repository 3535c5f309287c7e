/**
 * Health and contract routes (spec: Endpoints → health). All public and exempt from the setup
 * gate (DECISIONS.md). `/livez` and `/healthz` check nothing but the process; `/readyz` checks
 * the store and, with SERVICE_BUS=nats, the bus connection; `/pod-readyz` also turns 503 while the
 * server drains on shutdown.
 */
import Type from 'typebox';
import { ApiError } from '../../contract/errors.js';
import { PUBLIC, route, type AnyRoute } from '../../contract/route.js';
import { reply } from '../../http/reply.js';

const Alive = Type.Object({ status: Type.Literal('ok') }, { additionalProperties: false });

const Ready = Type.Object(
  {
    status: Type.Literal('ready'),
    checks: Type.Object({
      store: Type.Object({
        ok: Type.Boolean(),
        backend: Type.String(),
        migrations: Type.Object({ current: Type.Integer(), expected: Type.Integer() }),
      }),
      // Only with a bus to other replicas (SERVICE_BUS=nats): a replica that cannot hear or tell them is not ready.
      bus: Type.Optional(Type.Object({ ok: Type.Boolean(), kind: Type.Literal('nats') })),
    }),
  },
  { additionalProperties: false },
);

const ServerInfo = Type.Object(
  {
    version: Type.String(),
    api_version: Type.Literal('v1'),
    engine: Type.Object({
      http: Type.Union([Type.Literal('uws-native'), Type.Literal('uws-fallback')]),
      store: Type.Union([Type.Literal('sqlite'), Type.Literal('postgres')]),
      crypto: Type.Union([Type.Literal('libsodium'), Type.Literal('openssl')]),
    }),
    setup_required: Type.Boolean(),
    tls: Type.Boolean(),
  },
  { additionalProperties: false },
);

const ComponentStatus = Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('down')]);
const StatusDoc = Type.Object(
  {
    status: ComponentStatus,
    version: Type.String(),
    uptime_seconds: Type.Integer(),
    components: Type.Object({
      http: Type.Object({ status: ComponentStatus, engine: Type.String() }),
      store: Type.Object({ status: ComponentStatus, backend: Type.String() }),
      grpc: Type.Object({ status: ComponentStatus }),
      connectors: Type.Optional(
        Type.Object({
          status: ComponentStatus,
          failed: Type.Integer({ description: 'output connectors that deliver nothing (GET /v1/connectors/health says why)' }),
        }),
      ),
    }),
  },
  { additionalProperties: false },
);

const common = { stability: 'stable' as const, permission: PUBLIC, setupExempt: true, tags: ['health'] };

async function readiness(ctx: { services: import('../../serve/services.js').Services }) {
  const store = await ctx.services.storeReadiness();
  if (!store.ok)
    throw new ApiError(
      'unavailable',
      `not ready: store ${store.reachable ? `migrations at ${store.migrations.current} of ${store.migrations.expected}` : 'unreachable'}`,
    );
  const bus = ctx.services.events?.remote();
  if (bus && !bus.connected)
    throw new ApiError('unavailable', `not ready: bus disconnected (NATS at ${bus.servers.join(', ')}; reconnecting)`);
  return {
    status: 'ready' as const,
    checks: {
      store: { ok: true, backend: ctx.services.store.backend, migrations: store.migrations },
      ...(bus ? { bus: { ok: true, kind: bus.kind } } : {}),
    },
  };
}

export const healthRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'GET',
    path: '/healthz',
    operationId: 'healthz',
    summary: 'Process is up and serving HTTP (no dependency checks)',
    response: Alive,
    handler: () => ({ status: 'ok' as const }),
  }),
  route({
    ...common,
    method: 'GET',
    path: '/livez',
    operationId: 'livez',
    summary: 'Liveness: the event loop answers (no dependency checks)',
    response: Alive,
    handler: () => ({ status: 'ok' as const }),
  }),
  route({
    ...common,
    method: 'GET',
    path: '/readyz',
    operationId: 'readyz',
    summary: 'Readiness: store reachable, every migration applied and (SERVICE_BUS=nats) the bus connected; 503 otherwise',
    response: Ready,
    timeoutMs: 5_000,
    handler: readiness,
  }),
  route({
    ...common,
    method: 'GET',
    path: '/pod-readyz',
    operationId: 'podReadyz',
    summary: 'Readiness for a load balancer: as /readyz, and 503 once shutdown has begun',
    response: Ready,
    timeoutMs: 5_000,
    handler: async (ctx) => {
      if (ctx.services.draining()) throw new ApiError('unavailable', 'not ready: shutting down');
      return readiness(ctx);
    },
  }),
  route({
    ...common,
    method: 'GET',
    path: '/status',
    operationId: 'status',
    summary: 'Public status document: overall and per-component state',
    response: StatusDoc,
    timeoutMs: 5_000,
    handler: async (ctx) => {
      const s = ctx.services;
      const store = await s.storeReadiness();
      const storeStatus = store.ok ? 'ok' : store.reachable ? 'degraded' : 'down';
      const httpStatus = s.engine.http === 'uws-native' ? 'ok' : 'degraded';
      const grpcStatus = s.grpc.listening ? 'ok' : 'down';
      // A failed output connector (e.g. its secret was deleted) degrades the server: svc status exits 7.
      const failedConnectors = s.connectors?.failedCount() ?? 0;
      const connectorStatus = failedConnectors > 0 ? 'degraded' : 'ok';
      const all = [storeStatus, httpStatus, grpcStatus, connectorStatus];
      const overall = all.includes('down') ? (storeStatus === 'down' ? 'down' : 'degraded') : all.includes('degraded') ? 'degraded' : 'ok';
      return {
        status: overall as 'ok' | 'degraded' | 'down',
        version: s.build.version,
        uptime_seconds: Math.floor((Date.now() - s.startedAt) / 1000),
        components: {
          http: { status: httpStatus as 'ok' | 'degraded', engine: s.engine.http },
          store: { status: storeStatus as 'ok' | 'degraded' | 'down', backend: s.store.backend },
          grpc: { status: grpcStatus as 'ok' | 'down' },
          ...(s.connectors ? { connectors: { status: connectorStatus as 'ok' | 'degraded', failed: failedConnectors } } : {}),
        },
      };
    },
  }),
  route({
    ...common,
    method: 'GET',
    path: '/v1/server-info',
    operationId: 'getServerInfo',
    summary: 'Build version, engines and whether setup is still pending',
    tags: ['system'],
    response: ServerInfo,
    handler: (ctx) => ({
      version: ctx.services.build.version,
      api_version: 'v1' as const,
      engine: { http: ctx.services.engine.http, store: ctx.services.store.backend, crypto: ctx.services.engine.crypto },
      setup_required: ctx.services.setupRequired(),
      tls: ctx.services.tls,
    }),
  }),
  route({
    ...common,
    method: 'GET',
    path: '/metrics',
    operationId: 'metrics',
    summary: 'Prometheus text metrics',
    produces: 'text/plain; version=0.0.4; charset=utf-8',
    handler: async (ctx) => reply.text(await ctx.services.metrics.render(), ctx.services.metrics.contentType),
  }),
  route({
    ...common,
    method: 'GET',
    path: '/openapi.json',
    operationId: 'openapiStable',
    summary: 'The stable core contract (OpenAPI 3.1)',
    handler: (ctx) => reply.json(ctx.services.openapi('stable')),
  }),
  route({
    ...common,
    method: 'GET',
    path: '/openapi.beta.json',
    // The beta contract document itself (OpenAPI 3.1 fixes its shape); the stable document keeps the 53 core paths.
    unlisted: 'protocol',
    operationId: 'openapiBeta',
    summary: 'The beta module-route contract (OpenAPI 3.1)',
    handler: (ctx) => reply.json(ctx.services.openapi('beta')),
  }),
];
