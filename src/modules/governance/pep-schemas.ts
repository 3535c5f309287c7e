/** Wire schemas of the decision endpoint, kill switches and policy revisions (TypeBox). */
import Type from 'typebox';
import { Timestamp, Uuid, MultilineText, Text } from '../../contract/common.js';

const Short = (max: number, description?: string) => Text({ minLength: 1, maxLength: max, ...(description ? { description } : {}) });
const Verdict = Type.Union([Type.Literal('allow'), Type.Literal('deny'), Type.Literal('ask')]);

export const HookBody = Type.Object(
  {
    hook_event_name: Type.String({
      pattern: '^[A-Za-z][A-Za-z0-9]{0,63}$',
      description: '`PreToolUse`, `PostToolUse`, …: the Cedar action',
    }),
    session_id: Short(200),
    tool_name: Type.String({ pattern: '^[A-Za-z0-9_.:/-]{1,200}$', description: 'the Cedar resource `Svc::Tool::"<tool_name>"`' }),
    tool_input: Type.Record(Text({ maxLength: 200 }), Type.Unknown(), { maxProperties: 200, 'x-opaque': true }),
    agent_id: Type.Optional(
      Short(
        200,
        "the agent this hook runs for, by id, external id or name (default: the credential); resolved to the agent's id for kill " +
          'switches',
      ),
    ),
    cwd: Type.Optional(Text({ maxLength: 4096 })),
    permission_mode: Type.Optional(Short(64)),
    transcript_path: Type.Optional(Text({ maxLength: 4096, description: 'accepted and ignored' })),
    tool_response: Type.Optional(Type.Unknown({ description: 'PostToolUse only; accepted and not recorded' })),
  },
  { additionalProperties: false },
);

export const PepDecision = Type.Object(
  {
    decision: Verdict,
    reason: Type.String(),
    revision: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
      description: 'the policy revision that decided; null when a kill switch or the absence of a policy did',
    }),
    decision_id: Uuid,
    policies: Type.Array(Type.String(), { description: 'the policies that decided' }),
    kill_switch: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);

export const PepDecisionListQuery = Type.Object(
  {
    since: Type.Optional(Timestamp),
    cursor: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,15}$', description: 'ledger seq to continue from' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
    decision: Type.Optional(Verdict),
    tool_name: Type.Optional(Short(200)),
    session_id: Type.Optional(Short(200)),
    agent_id: Type.Optional(Short(200)),
  },
  { additionalProperties: false },
);

export const PepDecisionRecord = Type.Object(
  {
    decision_id: Type.String(),
    seq: Type.Integer(),
    decided_at: Timestamp,
    actor: Type.String(),
    decision: Type.String(),
    reason: Type.String(),
    revision: Type.Union([Type.Integer(), Type.Null()]),
    policies: Type.Array(Type.String()),
    kill_switch: Type.Union([Type.String(), Type.Null()]),
    hook_event_name: Type.String(),
    tool_name: Type.String(),
    session_id: Type.String(),
    agent_id: Type.String(),
    tool_input: Type.Unknown({ description: 'summarised and redacted' }),
    tool_input_sha256: Type.String(),
  },
  { additionalProperties: false },
);

export const PepDecisionPage = Type.Object(
  { items: Type.Array(PepDecisionRecord), has_more: Type.Boolean(), cursor: Type.Optional(Type.String()) },
  { additionalProperties: false },
);

export const KillSwitchBody = Type.Object(
  {
    agent: Type.Optional(
      Short(
        200,
        'the agent by id, external id or name (stored as `agent:<id>`; unknown: 404 with close names; several: 409 `ambiguous`), or a ' +
          'credential (`token:<API key id or name>`, `user:<user id or e-mail>`, stored by id); absent: the whole tenant',
      ),
    ),
    reason: Type.Optional(Text({ maxLength: 2000 })),
  },
  { additionalProperties: false },
);
export const KillSwitchReleaseBody = Type.Object(
  { agent: Type.Optional(Short(200, 'as when engaged: id, external id or name, or the stored scope after `agent:`')) },
  { additionalProperties: false },
);
export const KillSwitch = Type.Object(
  { scope: Type.String(), reason: Type.String(), created_by: Type.String(), created_at: Timestamp },
  { additionalProperties: false },
);
export const KillSwitchList = Type.Object({ items: Type.Array(KillSwitch) }, { additionalProperties: false });

// ---- policy revisions ----

const Surface = Type.String({
  pattern: '^[a-z][a-z0-9-]{0,62}$',
  description: 'the policy surface (default `hooks`, the decision endpoint)',
});
export const SurfaceQuery = Type.Object({ surface: Type.Optional(Surface) }, { additionalProperties: false });
export const RevisionParams = Type.Object({ revision: Type.String({ pattern: '^[1-9][0-9]{0,17}$' }) }, { additionalProperties: false });

export const PolicyDocBody = Type.Object(
  {
    surface: Type.Optional(Surface),
    content: MultilineText({ maxLength: 1024 * 1024, description: 'the whole Cedar policy document (replace semantics)' }),
    note: Type.Optional(Text({ maxLength: 2000 })),
  },
  { additionalProperties: false },
);

export const RollbackBody = Type.Object(
  { surface: Type.Optional(Surface), revision: Type.Integer({ minimum: 1 }) },
  { additionalProperties: false },
);

export const ValidateResult = Type.Object(
  {
    valid: Type.Boolean(),
    errors: Type.Array(Type.String()),
    policies: Type.Array(
      Type.Object(
        { id: Type.String(), effect: Type.String(), annotations: Type.Record(Type.String(), Type.String()) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const EvalBody = Type.Object(
  {
    surface: Type.Optional(Surface),
    content: Type.Optional(MultilineText({ maxLength: 1024 * 1024, description: 'a candidate document; absent: the active revision' })),
    input: Type.Object(
      {
        hook_event_name: HookBody.properties.hook_event_name,
        session_id: Type.Optional(Short(200)),
        tool_name: HookBody.properties.tool_name,
        tool_input: Type.Optional(HookBody.properties.tool_input),
        agent_id: Type.Optional(Short(200)),
      },
      { additionalProperties: false, description: 'a hook call, decided as the caller would see it' },
    ),
  },
  { additionalProperties: false },
);

export const EvalResult = Type.Object(
  {
    decision: Verdict,
    reason: Type.String(),
    policies: Type.Array(Type.String()),
    errors: Type.Array(Type.String()),
    revision: Type.Union([Type.Integer(), Type.Null()]),
  },
  { additionalProperties: false },
);

export const Revision = Type.Object(
  {
    surface: Type.String(), revision: Type.Integer({ minimum: 1 }), content: Type.String(), note: Type.String(),
    sha256: Type.String({ description: 'hex SHA-256 of the artifact (the content as UTF-8)' }),
    key_fingerprint: Type.String({ description: 'hex SHA-256 of the signing key (SPKI DER)' }),
    signature: Type.String({ description: 'base64 Ed25519 signature over the artifact bytes' }),
    created_by: Type.String(), created_at: Timestamp, active: Type.Boolean(),
  },
  { additionalProperties: false },
);
export const RevisionList = Type.Object({ items: Type.Array(Revision) }, { additionalProperties: false });
export const RollbackResult = Type.Object(
  { from: Type.Union([Type.Integer(), Type.Null()]), to: Revision },
  { additionalProperties: false },
);
export const SigningKey = Type.Object(
  { alg: Type.Literal('ed25519'), fingerprint: Type.String(), public_key_pem: Type.String() },
  { additionalProperties: false },
);
