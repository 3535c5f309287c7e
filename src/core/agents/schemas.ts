/** Wire schemas of the agents routes (TypeBox; validation and OpenAPI both read them). */
import Type from 'typebox';
import { Limit, Text, Timestamp, Uuid } from '../../contract/common.js';

const Name = Text({ minLength: 1, maxLength: 200 });
const Kind = Type.String({
  pattern: '^[a-z0-9][a-z0-9_.-]{0,63}$',
  description: 'free-form kind, e.g. `coding`, `support`; default `agent`',
});
const ExternalId = Text({ maxLength: 256, description: "the agent's id in its own runtime; unique per tenant when not empty" });
const Status = Type.Union([Type.Literal('active'), Type.Literal('paused'), Type.Literal('disabled')]);
const LabelKey = '^[A-Za-z0-9][A-Za-z0-9_./-]{0,62}$';
const Labels = Type.Record(Type.String({ pattern: LabelKey }), Text({ maxLength: 256 }), { maxProperties: 64 });

export const Agent = Type.Object(
  {
    id: Uuid,
    tenant_id: Uuid,
    name: Type.String(),
    kind: Type.String(),
    external_id: Type.String(),
    status: Type.String(),
    labels: Type.Record(Type.String(), Type.String()),
    version: Type.Integer({ minimum: 1, description: 'optimistic-concurrency counter; send it back on PATCH' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export const AgentPage = Type.Object(
  { items: Type.Array(Agent), has_more: Type.Boolean(), cursor: Type.Optional(Type.String()) },
  { additionalProperties: false },
);

export const AgentCreateBody = Type.Object(
  {
    name: Name,
    kind: Type.Optional(Kind),
    external_id: Type.Optional(ExternalId),
    status: Type.Optional(Status),
    labels: Type.Optional(Labels),
  },
  { additionalProperties: false },
);

export const AgentPatchBody = Type.Object(
  {
    version: Type.Integer({ minimum: 1, description: 'the version the change is based on; a stale one → 409 conflict' }),
    name: Type.Optional(Name),
    kind: Type.Optional(Kind),
    external_id: Type.Optional(ExternalId),
    status: Type.Optional(Status),
    labels: Type.Optional(
      Type.Record(Type.String({ pattern: LabelKey }), Type.Union([Text({ maxLength: 256 }), Type.Null()]), {
        maxProperties: 64,
        description: 'merged key by key (RFC 7396): a string sets the label, null removes it, absent keys stay',
      }),
    ),
  },
  { additionalProperties: false },
);

export const AgentListQuery = Type.Object(
  {
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Text({ maxLength: 200 })),
    status: Type.Optional(Status),
    kind: Type.Optional(Kind),
  },
  { additionalProperties: false },
);

export const AgentDeleteQuery = Type.Object(
  { version: Type.Optional(Type.Integer({ minimum: 1, description: 'when given, must be current (409 otherwise)' })) },
  { additionalProperties: false },
);

export const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false });
