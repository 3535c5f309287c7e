/** Request and response schemas of the connector, health and source routes. */
import Type from 'typebox';
import { Limit, Text, Uuid } from '../../contract/common.js';

export const NAME_PATTERN = '^[a-z0-9][a-z0-9._-]{0,99}$';
export const Name = Type.String({ pattern: NAME_PATTERN, description: 'lower-case letters, digits, . _ -' });
const Opaque = (description: string) =>
  Type.Record(Type.String({ maxLength: 200 }), Type.Unknown(), { maxProperties: 100, 'x-opaque': true, description });
const Severity = Type.Union([
  Type.Literal('info'),
  Type.Literal('low'),
  Type.Literal('medium'),
  Type.Literal('high'),
  Type.Literal('critical'),
]);

export const SourcesIn = Type.Object(
  {
    ledger: Type.Optional(Type.Boolean({ description: 'forward the audit ledger (default true)' })),
    system: Type.Optional(
      Type.Boolean({ description: 'forward the system chain too (logins, tokens, users; default false; all-tenants connectors only)' }),
    ),
    events: Type.Optional(
      Type.Union([
        Type.Object(
          {
            types: Type.Array(Text({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 100 }),
            min_severity: Type.Optional(Type.Union([Severity, Type.Null()])),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ]),
    ),
  },
  { additionalProperties: false },
);

export const ConnectorIn = Type.Object(
  {
    name: Name,
    kind: Text({ minLength: 1, maxLength: 40 }),
    tenant: Type.Optional(Type.Union([Uuid, Type.Null()], { description: 'one tenant, or null/absent for every tenant' })),
    format: Type.Optional(Text({ minLength: 1, maxLength: 40, description: "a token of the kind's surface; absent: the surface default" })),
    config: Opaque("the kind's settings (docs/connectors.md); secret fields hold secret:<name> references"),
    enabled: Type.Optional(Type.Boolean()),
    sources: Type.Optional(SourcesIn),
    max_attempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
    initial_interval_s: Type.Optional(Type.Integer({ minimum: 1, maximum: 86400 })),
  },
  { additionalProperties: false },
);

export const ConnectorOut = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    kind: Type.String(),
    tenant: Type.Union([Type.String(), Type.Null()]),
    format: Type.String(),
    config: Opaque("the kind's settings"),
    sources: Type.Object({
      ledger: Type.Boolean(),
      system: Type.Boolean(),
      events: Type.Union([
        Type.Object({ types: Type.Array(Type.String()), min_severity: Type.Union([Type.String(), Type.Null()]) }),
        Type.Null(),
      ]),
    }),
    enabled: Type.Boolean(),
    max_attempts: Type.Integer(),
    initial_interval_s: Type.Integer(),
    secret_refs: Type.Array(Type.String()),
    version: Type.Integer(),
    created_at: Type.String(),
    updated_at: Type.String(),
  },
  { additionalProperties: false },
);

export const DeliveryOut = Type.Object(
  {
    id: Type.String(),
    subscription_id: Type.String({ description: 'the lane: one (connector, tenant, source)' }),
    event_id: Type.String(),
    event_seq: Type.Integer({ description: 'first seq of the batch' }),
    kind: Type.String(),
    status: Type.String(),
    attempts: Type.Integer(),
    next_attempt_at: Type.Union([Type.String(), Type.Null()]),
    last_status: Type.Union([Type.Integer(), Type.Null()]),
    last_error: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String(),
    updated_at: Type.String(),
    delivered_at: Type.Union([Type.String(), Type.Null()]),
    tenant: Type.String(),
    source: Type.String(),
    from_seq: Type.Integer(),
    to_seq: Type.Integer(),
  },
  { additionalProperties: false },
);

export const ListQuery = Type.Object(
  {
    name: Type.Optional(Name),
    deliveries: Type.Optional(
      Type.Union(
        [
          Type.Literal('all'),
          Type.Literal('queued'),
          Type.Literal('delivering'),
          Type.Literal('delivered'),
          Type.Literal('failed'),
          Type.Literal('dead'),
        ],
        { description: "with name: also list the connector's deliveries (all, or of one status)" },
      ),
    ),
    limit: Type.Optional(Limit),
  },
  { additionalProperties: false },
);

export const NameQuery = Type.Object({ name: Name }, { additionalProperties: false });

export const RedeliverIn = Type.Object(
  {
    name: Name,
    batch_id: Type.Optional(Uuid),
  },
  { additionalProperties: false, description: 'batch_id: one dead batch (a delivery id of the listing); absent: every dead batch' },
);
export const RedeliverOut = Type.Object(
  { name: Type.String(), requeued: Type.Array(DeliveryOut, { description: 'the batches requeued, as they are now (queued, attempts 0)' }) },
  { additionalProperties: false },
);

export const TestIn = Type.Object({ name: Name }, { additionalProperties: false });
export const TestOut = Type.Object(
  {
    name: Type.String(),
    result: Type.String(),
    status: Type.Union([Type.Integer(), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()]),
    duration_ms: Type.Number(),
    format: Type.String(),
    bytes: Type.Integer(),
  },
  { additionalProperties: false },
);

const LaneOut = Type.Object({
  tenant: Type.String(),
  source: Type.String(),
  lane_id: Type.String(),
  cursor_seq: Type.Integer(),
  delivered_seq: Type.Integer(),
  head_seq: Type.Integer(),
  lag_records: Type.Integer(),
  lag_seconds: Type.Number(),
  queued: Type.Integer(),
  dead: Type.Integer(),
  failed: Type.Integer(),
  delivered_at: Type.Union([Type.String(), Type.Null()]),
});
export const HealthOut = Type.Object(
  {
    summary: Type.Object({
      total: Type.Integer(),
      running: Type.Integer(),
      failed: Type.Integer(),
      stopped: Type.Integer(),
      disabled: Type.Integer(),
      dead_letters: Type.Integer(),
      max_lag_records: Type.Integer(),
      max_lag_seconds: Type.Number(),
    }),
    items: Type.Array(
      Type.Object({
        name: Type.String(),
        kind: Type.String(),
        tenant: Type.Union([Type.String(), Type.Null()]),
        state: Type.Union([Type.Literal('running'), Type.Literal('failed'), Type.Literal('stopped'), Type.Literal('disabled')]),
        reason: Type.Union([Type.String(), Type.Null()]),
        last_success_at: Type.Union([Type.String(), Type.Null()]),
        last_error: Type.Union([Type.String(), Type.Null()]),
        last_error_at: Type.Union([Type.String(), Type.Null()]),
        lag: Type.Object({ records: Type.Integer(), seconds: Type.Number() }),
        dead_letters: Type.Integer(),
        failed_records: Type.Integer(),
        queued: Type.Integer(),
        lanes: Type.Array(LaneOut),
      }),
    ),
  },
  { additionalProperties: false },
);
export const HealthQuery = Type.Object({ name: Type.Optional(Name) }, { additionalProperties: false });

export const SourceIn = Type.Object(
  {
    name: Name,
    kind: Text({ minLength: 1, maxLength: 60, description: 'collector source kind: jsonl or dir' }),
    tenant: Uuid,
    enabled: Type.Optional(Type.Boolean()),
    poll_interval_s: Type.Optional(Type.Integer({ minimum: 1, maximum: 86400 })),
    config: Opaque("the source kind's settings ({path})"),
  },
  { additionalProperties: false },
);
export const SourceOut = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    kind: Type.String(),
    tenant: Type.String(),
    enabled: Type.Boolean(),
    poll_interval_s: Type.Integer(),
    config: Opaque("the source kind's settings"),
    last_seen_at: Type.Union([Type.String(), Type.Null()]),
    counts: Type.Record(Type.String(), Type.Number()),
    version: Type.Integer(),
    created_at: Type.String(),
    updated_at: Type.String(),
  },
  { additionalProperties: false },
);
export const SourcesQuery = Type.Object({ tenant: Type.Optional(Uuid) }, { additionalProperties: false });
