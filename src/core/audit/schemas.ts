/** Response schemas of the audit routes (DECISIONS.md "Audit ledger": record, page, verify report, keys). */
import Type from 'typebox';
import { Text, Timestamp } from '../../contract/common.js';

const Hex64 = Type.String({ pattern: '^[0-9a-f]{64}$' });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

/** A ledger record as served (and as `svc audit verify --file` reads it). */
export const AuditRecordSchema = Type.Object(
  {
    id: Type.String(),
    tenant: Type.String(),
    seq: Type.Integer({ minimum: 1 }),
    occurred_at: Timestamp,
    actor: Type.String(),
    actor_kind: Type.String(),
    action: Type.String(),
    target_kind: Type.String(),
    target_id: Type.String(),
    meta: Nullable(Type.String({ description: 'canonical JSON text of the meta object; null once erased' })),
    meta_blind: Nullable(Hex64),
    meta_commitment: Hex64,
    payload_hash: Nullable(Hex64),
    prev_hash: Hex64,
    hash: Hex64,
    sig: Type.String({ description: 'base64' }),
    key_id: Type.String(),
  },
  { additionalProperties: false },
);

/** `GET /v1/audit` and `GET /v1/audit/system`. */
export const AuditPageSchema = Type.Object(
  {
    items: Type.Array(AuditRecordSchema),
    has_more: Type.Boolean(),
    head_seq: Type.Integer({ minimum: 0, description: 'the chain head: seq of its last record (0 for an empty chain)' }),
    head_hash: Nullable(
      Type.String({
        pattern: '^[0-9a-f]{64}$',
        description:
          'the chain head: hex hash of record head_seq, as the heads table holds it (null for an empty chain); a verifier checks it ' +
          'against that record',
      }),
    ),
    cursor: Type.Optional(Type.String()),
    damaged: Type.Optional(
      Type.String({
        description:
          'present when the chain is damaged (its head does not name its last stored record): why it takes no records. The page is ' +
          'what is stored; `GET /v1/audit/verify` or `svc audit verify` names the first bad seq, and this read is recorded on the ' +
          'system chain instead',
      }),
    ),
  },
  { additionalProperties: false },
);

const Reason = Nullable(Type.String());
const SeqOrNull = Nullable(Type.Integer());

/** `GET /v1/audit/verify`, field for field as DECISIONS.md pins it. */
export const VerifyReportSchema = Type.Object(
  {
    ok: Type.Boolean(),
    chain: Type.Object(
      { ok: Type.Boolean(), checked: Type.Integer(), break_at: SeqOrNull, reason: Reason },
      { additionalProperties: false },
    ),
    checkpoints: Type.Object(
      {
        ok: Type.Boolean(),
        status: Type.Union([Type.Literal('ok'), Type.Literal('failed'), Type.Literal('pending')]),
        count: Type.Integer(),
        latest_attested_seq: SeqOrNull,
        first_bad_seq: SeqOrNull,
        reason: Reason,
      },
      { additionalProperties: false },
    ),
    signatures: Type.Object(
      { ok: Type.Boolean(), checked: Type.Integer(), first_bad_seq: SeqOrNull, reason: Reason },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

/** `GET /v1/audit/pubkey`. */
export const PubkeysSchema = Type.Object(
  {
    keys: Type.Array(
      Type.Object(
        {
          key_id: Type.String(),
          algorithm: Type.String(),
          public_key: Type.String({ description: 'base64: raw 32 bytes for ed25519, SPKI DER otherwise' }),
          pem: Type.String(),
          first_seq: Type.Integer(),
          last_seq: Type.Optional(Type.Integer()),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/** One on-demand checkpoint. */
export const CheckpointResultSchema = Type.Object(
  { tenant: Type.String(), seq: Type.Integer(), attested_seq: Type.Integer() },
  { additionalProperties: false },
);

/** The record filters shared by `GET /v1/audit`, `/v1/audit/system` and `/v1/audit/export`. */
export const AuditFilterFields = {
    action: Type.Optional(Text({ minLength: 1, maxLength: 200, description: 'action prefix, e.g. agent.' })),
    actor: Type.Optional(Text({ minLength: 1, maxLength: 300 })),
    target_kind: Type.Optional(Text({ minLength: 1, maxLength: 200 })),
    target_id: Type.Optional(Text({ maxLength: 300 })),
    since: Type.Optional(Timestamp),
    until: Type.Optional(Timestamp),
};
