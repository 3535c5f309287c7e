/** Wire schemas of the eventing routes (TypeBox; validation and OpenAPI both read them). */
import Type from 'typebox';
import { Limit, MultilineText, Text as TextRule, Timestamp, Uuid } from '../../contract/common.js';

const EventType = Type.String({ pattern: '^[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)+$', maxLength: 100 });
const Role = Type.Union([Type.Literal('viewer'), Type.Literal('editor'), Type.Literal('admin'), Type.Literal('owner')]);
const Text = (max: number) => TextRule({ minLength: 1, maxLength: max });

export const ReceiverAuth = Type.Union(
  [
    Type.Object({ kind: Type.Literal('bearer'), token: Text(4096) }, { additionalProperties: false }),
    Type.Object(
      { kind: Type.Literal('basic'), username: TextRule({ minLength: 1, maxLength: 256, pattern: '^[^:]*$' }), password: Text(1024) },
      { additionalProperties: false },
    ),
    Type.Object(
      { kind: Type.Literal('header'), name: Type.String({ pattern: '^[A-Za-z0-9!#$%&' + "'*+.^_`|~-]{1,64}$" }), value: Text(4096) },
      { additionalProperties: false },
    ),
  ],
  { description: 'credential the receiver expects; stored sealed, never returned (a hint of at most 4 characters is)' },
);

const Retry = Type.Object(
  {
    max_attempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, description: 'attempts before `dead` (default 12)' })),
    initial_interval_s: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 86_400,
        description: 'first retry delay; doubles per attempt, ' + 'capped at 8 h, ±20% jitter (default 30)',
      }),
    ),
  },
  { additionalProperties: false },
);

const SubscriptionFields = {
  name: Text(200),
  enabled: Type.Optional(Type.Boolean()),
  event_types: Type.Array(EventType, { minItems: 1, maxItems: 200 }),
  endpoint: TextRule({ minLength: 1, maxLength: 2048 }),
  ca_pem: Type.Optional(
    Type.Union([MultilineText({ maxLength: 65_536 }), Type.Null()], {
      description: 'PEM CA bundle the receiver certificate ' + 'must chain to (a private receiver)',
    }),
  ),
  pin_sha256: Type.Optional(
    Type.Union([Type.String({ pattern: '^[A-Za-z0-9+/]{43}=$' }), Type.Null()], {
      description: "base64 SHA-256 of the receiver's public key " + '(SubjectPublicKeyInfo); with it the chain is not checked, the key is',
    }),
  ),
  sink_format: Type.Optional(TextRule({ maxLength: 32, description: 'ocsf (default), cef, leef, syslog, otlp, otlp_envelope, json' })),
  retry: Type.Optional(Retry),
  timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 120_000, description: 'per attempt (default 10000)' })),
  role: Type.Optional(Role),
};

export const SubscriptionCreateBody = Type.Object(
  { ...SubscriptionFields, auth: Type.Optional(ReceiverAuth) },
  { additionalProperties: false },
);

export const SubscriptionUpdateBody = Type.Object(
  {
    ...SubscriptionFields,
    version: Type.Integer({ minimum: 1, description: 'the version the change is based on; a stale one → 409' }),
    auth: Type.Optional(Type.Union([ReceiverAuth, Type.Null()], { description: 'absent: keep the stored credential; null: remove it' })),
  },
  { additionalProperties: false },
);

export const Subscription = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    enabled: Type.Boolean(),
    event_types: Type.Array(Type.String()),
    endpoint: Type.String(),
    ca_pem: Type.Union([Type.String(), Type.Null()]),
    pin_sha256: Type.Union([Type.String(), Type.Null()]),
    sink_format: Type.String(),
    auth: Type.Union([
      Type.Object({ kind: Type.String(), header: Type.Optional(Type.String()), hint: Type.String() }, { additionalProperties: false }),
      Type.Null(),
    ]),
    retry: Type.Object({ max_attempts: Type.Integer(), initial_interval_s: Type.Integer() }, { additionalProperties: false }),
    timeout_ms: Type.Integer(),
    role: Type.String({ description: 'role ceiling: only event types this role may read are delivered' }),
    created_by: Type.String(),
    cursor_seq: Type.Integer({ description: 'events up to this sequence have been queued for delivery' }),
    previous_secret_expires_at: Type.Union([Timestamp, Type.Null()], {
      description: 'after a rotation: until ' + 'then the old secret signs too',
    }),
    version: Type.Integer({ minimum: 1 }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export const SubscriptionWithSecret = Type.Object(
  { ...Subscription.properties, secret: Type.String({ description: 'the signing secret (`whsec_…`), shown only in this answer' }) },
  { additionalProperties: false },
);

export const Page = <T extends ReturnType<typeof Type.Object>>(item: T) =>
  Type.Object({ items: Type.Array(item), has_more: Type.Boolean(), cursor: Type.Optional(Type.String()) }, { additionalProperties: false });

export const ListQuery = Type.Object(
  { limit: Type.Optional(Limit), cursor: Type.Optional(TextRule({ maxLength: 200 })) },
  { additionalProperties: false },
);

export const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false });

export const DeleteQuery = Type.Object({ version: Type.Optional(Type.Integer({ minimum: 1 })) }, { additionalProperties: false });

export const EventTypeItem = Type.Object(
  {
    type: Type.String(),
    source: Type.String(),
    description: Type.String(),
    stability: Type.String(),
    permission: Type.String({ description: 'what a role ' + 'needs to receive it' }),
    schema: Type.Unknown(),
    durable: Type.Boolean({ description: 'written to the event log, so a subscription can receive it; false: in-process only, refused' }),
  },
  { additionalProperties: false },
);
export const EventTypeList = Type.Object({ items: Type.Array(EventTypeItem) }, { additionalProperties: false });

export const CloudEvent = Type.Object(
  {
    specversion: Type.Literal('1.0'),
    id: Uuid,
    source: Type.String(),
    type: Type.String(),
    subject: Type.String(),
    time: Timestamp,
    datacontenttype: Type.Literal('application/json'),
    data: Type.Record(Type.String(), Type.Unknown()),
    tenantid: Uuid,
    sequence: Type.String({ pattern: '^[1-9][0-9]*$' }),
    traceparent: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export const EventsQuery = Type.Object(
  {
    after: Type.Optional(Type.Integer({ minimum: 0, description: 'sequence cursor: events after it (default 0)' })),
    type: Type.Optional(EventType),
    limit: Type.Optional(Limit),
  },
  { additionalProperties: false },
);
export const EventPage = Type.Object(
  {
    items: Type.Array(CloudEvent),
    has_more: Type.Boolean(),
    next_after: Type.Integer({ description: 'pass as `after` ' + 'for the next page' }),
  },
  { additionalProperties: false },
);

export const Delivery = Type.Object(
  {
    id: Uuid,
    subscription_id: Uuid,
    event_id: Uuid,
    event_seq: Type.Integer(),
    kind: Type.String(),
    status: Type.String({ description: 'queued, delivering, delivered, failed, dead' }),
    attempts: Type.Integer(),
    next_attempt_at: Type.Union([Type.String(), Type.Null()]),
    last_status: Type.Union([Type.Integer(), Type.Null()]),
    last_error: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp,
    updated_at: Timestamp,
    delivered_at: Type.Union([Timestamp, Type.Null()]),
  },
  { additionalProperties: false },
);

export const DeliveryStatus = Type.Union(['queued', 'delivering', 'delivered', 'failed', 'dead'].map((s) => Type.Literal(s)));

export const DeliveriesQuery = Type.Object(
  {
    subscription_id: Type.Optional(Uuid),
    status: Type.Optional(DeliveryStatus),
    limit: Type.Optional(Limit),
    cursor: Type.Optional(TextRule({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
export const DeadLettersQuery = Type.Object(
  { subscription_id: Type.Optional(Uuid), limit: Type.Optional(Limit), cursor: Type.Optional(TextRule({ maxLength: 200 })) },
  { additionalProperties: false },
);

export const ReplayBody = Type.Object(
  {
    from_seq: Type.Integer({ minimum: 1, description: 'first sequence to send again' }),
    to_seq: Type.Optional(Type.Integer({ minimum: 1, description: 'last one (default: the newest)' })),
  },
  { additionalProperties: false },
);
export const ReplayAnswer = Type.Object(
  { queued: Type.Integer(), from_seq: Type.Integer(), to_seq: Type.Integer(), truncated: Type.Boolean() },
  { additionalProperties: false },
);

export const TestAnswer = Type.Object({ delivery: Delivery }, { additionalProperties: false });

export const BusAnswer = Type.Object(
  {
    binding: Type.Object({ kind: Type.String(), connected: Type.Boolean() }, { additionalProperties: false }),
    published: Type.Integer(),
    types: Type.Array(Type.Object({ type: Type.String(), subscribers: Type.Array(Type.String()) }, { additionalProperties: false })),
    subscribers: Type.Array(
      Type.Object(
        {
          name: Type.String(),
          types: Type.Union([Type.Array(Type.String()), Type.Literal('*')]),
          depth: Type.Integer(),
          delivered: Type.Integer(),
          dropped: Type.Integer(),
          failed: Type.Integer(),
        },
        { additionalProperties: false },
      ),
    ),
    drops: Type.Integer(),
    lanes: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          tenant: Type.String(),
          name: Type.String(),
          queued: Type.Integer(),
          delivered: Type.Integer(),
          retried: Type.Integer(),
          failed: Type.Integer(),
          dead: Type.Integer(),
          in_flight: Type.Boolean(),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const EgressPolicyAnswer = Type.Object(
  {
    mode: Type.Union([Type.Literal('compatibility'), Type.Literal('enforced')]),
    fence_armed: Type.Boolean(),
    allow: Type.Array(Type.String()),
    would_block: Type.Array(
      Type.Object(
        { id: Type.String(), name: Type.String(), endpoint: Type.String(), reason: Type.String() },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export const EgressCheckBody = Type.Object({ endpoint: TextRule({ minLength: 1, maxLength: 2048 }) }, { additionalProperties: false });
export const EgressCheckAnswer = Type.Object(
  { endpoint: Type.String(), mode: Type.String(), allowed: Type.Boolean(), enforced: Type.Boolean(), reason: Type.String() },
  { additionalProperties: false },
);
