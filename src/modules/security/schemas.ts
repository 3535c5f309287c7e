/** Wire schemas of `/v1/m/security/findings*` (TypeBox; validation and OpenAPI both read them). */
import Type from 'typebox';
import { Limit, Timestamp, Uuid, MultilineText, Text } from '../../contract/common.js';

// One line of text: no C0 controls, no DEL (a NUL or a newline in a rule id or subject is refused).
const Line = (min: number, max: number, description?: string) =>
  Text({ minLength: min, maxLength: max, ...(description ? { description } : {}) });
const Token = Type.String({ pattern: '^[a-z][a-z0-9_.-]{0,63}$' });

// Spelled out (not mapped from model.ts' lists) so TypeBox infers the literal types.
export const Severity = Type.Union([
  Type.Literal('info'),
  Type.Literal('low'),
  Type.Literal('medium'),
  Type.Literal('high'),
  Type.Literal('critical'),
  Type.Literal('undetermined'),
]);
export const Status = Type.Union([
  Type.Literal('open'),
  Type.Literal('acknowledged'),
  Type.Literal('resolved'),
  Type.Literal('suppressed'),
]);
export const Source = Type.Union([Type.Literal('collector'), Type.Literal('integration'), Type.Literal('detector')]);
const Region = Type.Object(
  {
    start_line: Type.Integer({ minimum: 1, maximum: 100_000_000 }),
    end_line: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000_000 })),
  },
  { additionalProperties: false },
);
const LedgerRef = Type.Object({ tenant: Uuid, seq: Type.Integer({ minimum: 1 }), action: Type.String() }, { additionalProperties: false });

export const Finding = Type.Object(
  {
    id: Uuid,
    tenant_id: Uuid,
    rule_id: Type.String(),
    kind: Type.String(),
    severity: Type.String({ description: 'info, low, medium, high, critical or undetermined (the one severity mapping)' }),
    source: Source,
    subject_kind: Type.String(),
    subject_ref: Type.String(),
    message: Type.String(),
    artifact_uri: Type.Union([Type.String(), Type.Null()]),
    region: Type.Union([Region, Type.Null()]),
    tags: Type.Array(Type.String()),
    first_seen: Timestamp,
    last_seen: Timestamp,
    occurrences: Type.Integer({ minimum: 1 }),
    status: Status,
    status_by: Type.String({ description: 'who set the status: user:<id>, token:<id> or system' }),
    status_note: Type.String(),
    status_at: Timestamp,
    ledger_refs: Type.Array(LedgerRef, {
      description: 'ledger records the finding rests on (e.g. the ingest.batch record of a collector push)',
    }),
    fingerprint: Type.String({
      description: 'partialFingerprints.primaryLocationLineHash of its SARIF result; stable for the life of the finding',
    }),
    version: Type.Integer({ minimum: 1, description: 'optimistic-concurrency counter; send it back on PATCH to refuse a stale triage' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export const FindingPage = Type.Object(
  { items: Type.Array(Finding), has_more: Type.Boolean(), cursor: Type.Optional(Type.String()) },
  { additionalProperties: false },
);

/** Filters shared by the list and the export. */
export const FilterFields = {
  status: Type.Optional(Status),
  severity: Type.Optional(Severity),
  source: Type.Optional(Source),
  kind: Type.Optional(Token),
  rule_id: Type.Optional(Line(1, 256)),
  subject_kind: Type.Optional(Token),
  subject_ref: Type.Optional(Line(1, 512)),
};

export const ListQuery = Type.Object(
  { ...FilterFields, limit: Type.Optional(Limit), cursor: Type.Optional(Text({ maxLength: 200 })) },
  { additionalProperties: false },
);

export const ExportQuery = Type.Object(
  {
    ...FilterFields,
    format: Type.Optional(Text({ maxLength: 32, description: 'sarif (the only format, and the default)' })),
    max_results: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 10_000_000,
        description: "results to emit at most; never above the server's cap (SERVICE_FINDINGS_EXPORT_CAP, default 25000)",
      }),
    ),
  },
  { additionalProperties: false },
);

export const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false });

export const ReportItem = Type.Object(
  {
    rule_id: Line(1, 256, 'the reporting tool’s rule id (SARIF ruleId)'),
    kind: Type.Optional(Token),
    severity: Severity,
    subject_kind: Token,
    subject_ref: Line(1, 512, 'what the finding is about (an agent id, a host, a package…)'),
    message: MultilineText({ maxLength: 4096, description: 'text; tabs and newlines allowed, other control characters not' }),
    artifact_uri: Type.Optional(
      Line(1, 2048, 'a committed file (relative to the repository root, or an absolute URI): the SARIF location is anchored there'),
    ),
    region: Type.Optional(Region),
    tags: Type.Optional(Type.Array(Token, { maxItems: 32 })),
    observed_at: Type.Optional(Timestamp),
  },
  { additionalProperties: false },
);

export const ReportBody = Type.Object(
  { findings: Type.Array(ReportItem, { minItems: 1, maxItems: 1000 }) },
  { additionalProperties: false },
);

export const ReportAnswer = Type.Object(
  {
    accepted: Type.Integer(),
    reported: Type.Integer({ description: 'new findings, and resolved ones reported again' }),
    repeated: Type.Integer({ description: 'reports folded into existing findings' }),
    ids: Type.Array(Uuid, { description: 'the id of the finding each report became, in order' }),
  },
  { additionalProperties: false },
);

export const TriageBody = Type.Object(
  { status: Status, note: Type.Optional(MultilineText({ maxLength: 2000 })), version: Type.Optional(Type.Integer({ minimum: 1 })) },
  { additionalProperties: false },
);

export const EvaluateAnswer = Type.Object(
  {
    collector: Type.Object({ items: Type.Integer() }, { additionalProperties: false }),
    reported: Type.Integer(),
    resolved: Type.Integer(),
    repeated: Type.Integer(),
    drift: Type.Object({ items: Type.Integer(), complete: Type.Boolean() }, { additionalProperties: false }),
    escalation: Type.Object({ agents: Type.Integer(), paths: Type.Integer(), complete: Type.Boolean() }, { additionalProperties: false }),
  },
  { additionalProperties: false },
);

export const EvidenceAnswer = Type.Object(
  { id: Uuid, rule_id: Type.String(), evidence: Type.Record(Type.String(), Type.Unknown()) },
  { additionalProperties: false },
);
