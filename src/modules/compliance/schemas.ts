/** Wire schemas of the compliance routes (TypeBox; validation and OpenAPI both read them). */
import Type from 'typebox';
import { Limit, Text, Timestamp, Uuid } from '../../contract/common.js';

const Short = (description?: string) => Text({ minLength: 1, maxLength: 200, ...(description ? { description } : {}) });
const Long = (description?: string) => Text({ minLength: 1, maxLength: 2000, ...(description ? { description } : {}) });
const Opt = (max: number) => Text({ maxLength: max });

export const HoldScope = Type.Union([Type.Literal('tenant'), Type.Literal('data_class'), Type.Literal('subject')]);
export const HoldStatus = Type.Union([Type.Literal('active'), Type.Literal('released')]);

export const Hold = Type.Object(
  {
    id: Uuid, tenant_id: Uuid, scope: HoldScope, subject_kind: Type.String(), subject_ref: Type.String(), data_class: Type.String(),
    matter: Type.String(), reason: Type.String(), title: Type.String(), on_behalf_of: Type.String(), status: HoldStatus,
    placed_by: Type.String(), released_by: Type.Union([Type.String(), Type.Null()]), release_approval_id: Type.Union([Uuid, Type.Null()]),
    released_at: Type.Union([Timestamp, Type.Null()]), created_at: Timestamp, updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export const HoldPage = Type.Object(
  { items: Type.Array(Hold), has_more: Type.Boolean(), cursor: Type.Optional(Type.String()) },
  { additionalProperties: false },
);

export const HoldCreateBody = Type.Object(
  {
    scope: Type.Optional(HoldScope),
    subject_kind: Type.Optional(
      Text({
        minLength: 1,
        maxLength: 64,
        pattern: '^[a-z][a-z0-9_]*$',
        description: 'kind of the held subject (`agent`, `user`, `workspace`…); scope subject',
      }),
    ),
    subject_ref: Type.Optional(Short('id or reference of the held subject; scope subject')),
    data_class: Type.Optional(Short('data class id; scope data_class')),
    matter: Short('the legal matter'),
    reason: Long('why the hold is placed'),
    title: Type.Optional(Opt(200)),
    on_behalf_of: Type.Optional(Opt(200)),
  },
  { additionalProperties: false },
);

export const HoldListQuery = Type.Object(
  { limit: Type.Optional(Limit), cursor: Type.Optional(Uuid), status: Type.Optional(HoldStatus) },
  { additionalProperties: false },
);

export const HoldCheckQuery = Type.Object(
  {
    subject_kind: Type.Optional(Text({ minLength: 1, maxLength: 64 })),
    subject_ref: Type.Optional(Short()),
    data_class: Type.Optional(Short()),
  },
  { additionalProperties: false },
);

export const HoldCheck = Type.Object({ held: Type.Boolean(), holds: Type.Array(Uuid) }, { additionalProperties: false });

export const ApprovalRefBody = Type.Object(
  { approval_id: Type.Optional(Uuid), reason: Type.Optional(Opt(2000)) },
  { additionalProperties: false, description: 'without approval_id: opens an approval (202 pending_approval); with one: uses it' },
);

export const PendingApproval = Type.Object(
  { status: Type.Literal('pending_approval'), approval_id: Uuid },
  { additionalProperties: false },
);

export const CustodyEvent = Type.Object(
  {
    id: Uuid, record_kind: Type.String(), record_id: Uuid, event: Type.String(), people: Type.Array(Type.String()),
    approval_id: Type.Union([Uuid, Type.Null()]), ledger_seq: Type.Integer(), ledger_hash: Type.String(), created_at: Timestamp,
  },
  { additionalProperties: false },
);
export const CustodyList = Type.Object({ items: Type.Array(CustodyEvent) }, { additionalProperties: false });

export const ErasureStatus = Type.Union([Type.Literal('received'), Type.Literal('pending_approval'), Type.Literal('completed')]);

export const Erasure = Type.Object(
  {
    id: Uuid,
    tenant_id: Uuid,
    case_ref: Type.String(),
    subject_kind: Type.String(),
    subject_ref: Type.String(),
    aliases: Type.Array(Type.String()),
    data_classes: Type.Array(Type.String()),
    reason: Type.String(),
    status: ErasureStatus,
    requested_by: Type.String(),
    approval_id: Type.Union([Uuid, Type.Null()]),
    completed_at: Type.Union([Timestamp, Type.Null()]),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);
export const ErasurePage = Type.Object(
  { items: Type.Array(Erasure), has_more: Type.Boolean(), cursor: Type.Optional(Type.String()) },
  { additionalProperties: false },
);

export const ErasureCreateBody = Type.Object(
  {
    case_ref: Short('the case reference (e.g. the data-subject request id)'),
    subject_kind: Type.Optional(Text({ minLength: 1, maxLength: 64, pattern: '^[a-z][a-z0-9_]*$', description: 'default `user`' })),
    subject_ref: Short('id or reference of the subject'),
    aliases: Type.Optional(Type.Array(Short(), { maxItems: 50 })),
    data_classes: Type.Optional(Type.Array(Short(), { maxItems: 50 })),
    reason: Type.Optional(Opt(2000)),
  },
  { additionalProperties: false },
);
export const ErasureListQuery = Type.Object(
  { limit: Type.Optional(Limit), cursor: Type.Optional(Uuid), status: Type.Optional(ErasureStatus) },
  { additionalProperties: false },
);

export const Receipt = Type.Object(
  {
    erasure_id: Uuid, case_ref: Type.String(), subject_kind: Type.String(), subject_ref: Type.String(), aliases: Type.Array(Type.String()),
    approval_id: Uuid, approvers: Type.Array(Type.String()), executed_by: Type.String(), completed_at: Timestamp,
    erased: Type.Array(Type.Object({ where: Type.String(), count: Type.Integer() }, { additionalProperties: false })),
    not_erased: Type.Array(Type.String()),
    ledger_seq: Type.Integer(), ledger_hash: Type.String(),
  },
  { additionalProperties: false },
);

export const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false });
