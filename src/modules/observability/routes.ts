/**
 * Module routes `/v1/m/observability/*` (beta): read-only, own no stored entities (spec). Each
 * needs `observability:<resource>:read`: `observability:ingestion:read`, `observability:trace:read`,
 * `observability:attestation:read` (viewer and above).
 */
import Type from 'typebox';
import { route, type AnyRoute } from '../../contract/route.js';
import { Timestamp } from '../../contract/common.js';
import { tenantOf } from '../../http/request-scope.js';
import { attestation } from './attestation.js';
import { ingestionHealth } from './ingestion-health.js';
import { DEFAULT_WINDOW } from './ledger-window.js';
import { getTrace, listTraces } from './traces.js';

const common = { stability: 'beta' as const, tags: ['observability'] };
const WindowParam = Type.Integer({
  minimum: 1,
  maximum: 1_000_000,
  description: `ledger records examined, counted back from the chain head (default ${DEFAULT_WINDOW})`,
});
const WindowAnswer = Type.Object({ from_seq: Type.Integer(), to_seq: Type.Integer() }, { additionalProperties: false });
const Flow = Type.Object(
  { what: Type.String(), count: Type.Number(), last_seen: Type.Union([Timestamp, Type.Null()]) },
  { additionalProperties: false },
);
const Check = Type.Object({ verified: Type.Boolean(), detail: Type.String() }, { additionalProperties: false });
const Standard = Type.Object(
  {
    standard: Type.String(),
    pinned_version: Type.String(),
    status: Type.Union([Type.Literal('ok'), Type.Literal('failed'), Type.Literal('not_implemented')]),
    check: Type.Union([Check, Type.Null()]),
    inbound: Type.Array(Flow),
    outbound: Type.Array(Flow),
    note: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
const TraceId = Type.String({ pattern: '^[0-9a-f]{32}$', description: 'W3C trace id (32 lowercase hex digits)' });
const TraceRecord = Type.Object(
  {
    seq: Type.Integer(),
    occurred_at: Timestamp,
    actor: Type.String(),
    actor_kind: Type.String(),
    action: Type.String(),
    target_kind: Type.String(),
    target_id: Type.String(),
    traceparent: Type.String(),
    prev_hash: Type.String(),
    hash: Type.String(),
    sig: Type.String(),
    key_id: Type.String(),
  },
  { additionalProperties: false },
);
const Digest = Type.Union([Type.Object({ path: Type.String(), sha256: Type.String() }, { additionalProperties: false }), Type.Null()]);

export const observabilityRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'GET',
    path: '/v1/m/observability/ingestion-health',
    operationId: 'observabilityIngestionHealth',
    summary: 'Per pinned interop standard: what flows in and out (counts, last seen) and the pinned version, verified by a check run now',
    permission: 'observability:ingestion:read',
    query: Type.Object({ window: Type.Optional(WindowParam) }, { additionalProperties: false }),
    response: Type.Object({ ledger_window: WindowAnswer, standards: Type.Array(Standard) }, { additionalProperties: false }),
    handler: (ctx) => ingestionHealth(ctx.services, tenantOf(ctx), ctx.query.window ?? DEFAULT_WINDOW),
  }),
  route({
    ...common,
    method: 'GET',
    path: '/v1/m/observability/traces',
    operationId: 'observabilityTraces',
    summary: 'Traces the ledger records carry (requests with a W3C traceparent), most recent first',
    permission: 'observability:trace:read',
    query: Type.Object(
      { window: Type.Optional(WindowParam), limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) },
      { additionalProperties: false },
    ),
    response: Type.Object(
      {
        ledger_window: WindowAnswer,
        items: Type.Array(
          Type.Object(
            { trace_id: TraceId, records: Type.Integer(), first_seen: Timestamp, last_seen: Timestamp, actions: Type.Array(Type.String()) },
            { additionalProperties: false },
          ),
        ),
        has_more: Type.Boolean(),
      },
      { additionalProperties: false },
    ),
    handler: (ctx) => listTraces(ctx.services.store, tenantOf(ctx), ctx.query.window ?? DEFAULT_WINDOW, ctx.query.limit ?? 50),
  }),
  route({
    ...common,
    method: 'GET',
    path: '/v1/m/observability/traces/{id}',
    operationId: 'observabilityTrace',
    summary: 'One trace: its ledger records in order, with their integrity fields (404 when the window holds none)',
    permission: 'observability:trace:read',
    params: Type.Object({ id: TraceId }, { additionalProperties: false }),
    query: Type.Object({ window: Type.Optional(WindowParam) }, { additionalProperties: false }),
    response: Type.Object(
      { trace_id: TraceId, ledger_window: WindowAnswer, records: Type.Array(TraceRecord) },
      { additionalProperties: false },
    ),
    handler: (ctx) => getTrace(ctx.services.store, tenantOf(ctx), ctx.params.id, ctx.query.window ?? DEFAULT_WINDOW),
  }),
  route({
    ...common,
    method: 'GET',
    path: '/v1/m/observability/attestation',
    operationId: 'observabilityAttestation',
    summary: 'What is provably true about the running build: version, commit, build date, lockfile digests, release or not',
    permission: 'observability:attestation:read',
    response: Type.Object(
      {
        version: Type.String(),
        commit: Type.String(),
        build_date: Type.String(),
        release: Type.Boolean(),
        provenance: Type.String(),
        lockfile: Digest,
        installed_lockfile: Digest,
        runtime: Type.Object(
          {
            node: Type.String(),
            os: Type.String(),
            arch: Type.String(),
            fips: Type.Boolean(),
            http_engine: Type.String(),
            crypto_engine: Type.String(),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
    handler: (ctx) => attestation(ctx.services),
  }),
];
