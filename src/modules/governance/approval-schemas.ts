/** Wire schemas of the approvals routes (TypeBox; validation and OpenAPI both read them). */
import Type from 'typebox';
import { Limit, Timestamp, Uuid, MultilineText, Text } from '../../contract/common.js';

const Name = Text({ minLength: 1, maxLength: 200 });
const Reason = MultilineText({ maxLength: 2000 });
const Params = Type.Record(Type.String({ maxLength: 200 }), Type.Unknown(), {
  maxProperties: 200,
  'x-opaque': true,
  description: 'exactly what will be done; part of the plan hash',
});
const Status = Type.Union([
  Type.Literal('pending'),
  Type.Literal('approved'),
  Type.Literal('rejected'),
  Type.Literal('cancelled'),
  Type.Literal('consumed'),
  Type.Literal('expired'),
]);

export const Approval = Type.Object(
  {
    id: Uuid,
    tenant_id: Uuid,
    action: Type.String(),
    subject: Type.String(),
    params: Type.Record(Text(), Type.Unknown(), { 'x-opaque': true }),
    plan_hash: Type.String({
      pattern: '^[0-9a-f]{64}$',
      description: 'hex SHA-256 of the RFC 8785 canonical JSON of {action, subject, params}',
    }),
    quorum: Type.Integer({ minimum: 1 }),
    approvals: Type.Integer({ minimum: 0, description: 'distinct people who approved' }),
    status: Status,
    reason: Type.String(),
    requested_by: Uuid,
    expires_at: Timestamp,
    resolved_at: Type.Union([Timestamp, Type.Null()]),
    consumed_at: Type.Union([Timestamp, Type.Null()]),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export const ApprovalPage = Type.Object(
  { items: Type.Array(Approval), has_more: Type.Boolean(), cursor: Type.Optional(Type.String()) },
  { additionalProperties: false },
);

export const ApprovalCreateBody = Type.Object(
  {
    action: Name,
    subject: Name,
    params: Type.Optional(Params),
    quorum: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 10, description: 'distinct approvers needed besides the requester (default 2)' }),
    ),
    expires_in: Type.Optional(
      Type.Integer({ minimum: 60, maximum: 30 * 24 * 3600, description: 'seconds until the approval expires (default 86400)' }),
    ),
    reason: Type.Optional(Reason),
  },
  { additionalProperties: false },
);

export const ApprovalListQuery = Type.Object(
  { limit: Type.Optional(Limit), cursor: Type.Optional(Uuid), status: Type.Optional(Status), action: Type.Optional(Name) },
  { additionalProperties: false },
);

export const Decision = Type.Object(
  {
    id: Uuid,
    approval_id: Uuid,
    user_id: Uuid,
    actor: Type.String(),
    decision: Type.Union([Type.Literal('approve'), Type.Literal('reject')]),
    reason: Type.String(),
    created_at: Timestamp,
  },
  { additionalProperties: false },
);

export const DecisionList = Type.Object({ items: Type.Array(Decision) }, { additionalProperties: false });

export const DecisionCreateBody = Type.Object(
  { decision: Type.Union([Type.Literal('approve'), Type.Literal('reject')]), reason: MultilineText({ minLength: 1, maxLength: 2000 }) },
  { additionalProperties: false },
);

export const DecisionResult = Type.Object({ decision: Decision, approval: Approval }, { additionalProperties: false });

export const CancelBody = Type.Object({ reason: Type.Optional(Reason) }, { additionalProperties: false });

export const ConsumeBody = Type.Union(
  [
    Type.Object({ action: Name, subject: Name, params: Type.Optional(Params) }, { additionalProperties: false }),
    Type.Object({ plan_hash: Type.String({ pattern: '^[0-9a-f]{64}$' }) }, { additionalProperties: false }),
  ],
  { description: 'the plan being executed, or its hash: it must equal the approved plan' },
);

export const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false });
