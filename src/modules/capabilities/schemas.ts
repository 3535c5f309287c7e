/**
 * Wire schemas of the capabilities routes. One body for create (POST) and replace (PUT): a PUT
 * replaces the whole object, so every optional field it leaves out takes the server default below
 * (CONFIG_DEFAULTS), never the stored value.
 */
import Type from 'typebox';
import { Limit, MultilineText, Text, Timestamp, Uuid } from '../../contract/common.js';

const Name = Text({
  minLength: 1,
  maxLength: 100,
  pattern: '^[a-z0-9][a-z0-9._-]{0,99}$',
  description: 'unique per tenant; lowercase letters, digits, . _ -',
});
const Kind = Type.Union([Type.Literal('mcp_server'), Type.Literal('tool')]);
const Transport = Type.Union([Type.Literal('stdio'), Type.Literal('http'), Type.Literal('sse')]);
const Value = Text({
  maxLength: 4096,
  description: 'a plain value, or a reference `secret:<name>` to the console secrets store (credentials must be references)',
});
const EnvMap = Type.Record(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]{0,127}$' }), Value, { maxProperties: 100 });
const HeaderMap = Type.Record(Type.String({ pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$" }), Value, { maxProperties: 50 });
const Names = Type.Array(Text({ minLength: 1, maxLength: 200 }), { maxItems: 500 });

export const ConfigBody = Type.Object(
  {
    name: Name,
    kind: Kind,
    description: Type.Optional(MultilineText({ maxLength: 2000 })),
    enabled: Type.Optional(Type.Boolean()),
    transport: Type.Optional(Transport),
    command: Type.Optional(Text({ minLength: 1, maxLength: 4096 })),
    args: Type.Optional(Type.Array(Text({ maxLength: 4096 }), { maxItems: 200 })),
    url: Type.Optional(
      Text({
        maxLength: 2048,
        pattern: '^(https://|http://(127\\.0\\.0\\.1|localhost|\\[::1\\])[:/])',
        description: 'https, or http on loopback only',
      }),
    ),
    env: Type.Optional(EnvMap),
    headers: Type.Optional(HeaderMap),
    server: Type.Optional(Name),
    tool: Type.Optional(Text({ minLength: 1, maxLength: 200 })),
    allowed_tools: Type.Optional(Names),
    denied_tools: Type.Optional(Names),
    requires_approval: Type.Optional(Type.Boolean()),
    timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 600000 })),
  },
  { additionalProperties: false },
);

/** The stored document: every field present (defaults filled in). */
const Document = {
  name: Type.String(),
  kind: Kind,
  description: Type.String(),
  enabled: Type.Boolean(),
  transport: Type.Union([Transport, Type.Null()]),
  command: Type.Union([Type.String(), Type.Null()]),
  args: Type.Array(Type.String()),
  url: Type.Union([Type.String(), Type.Null()]),
  env: Type.Record(Type.String(), Type.String()),
  headers: Type.Record(Type.String(), Type.String()),
  server: Type.Union([Type.String(), Type.Null()]),
  tool: Type.Union([Type.String(), Type.Null()]),
  allowed_tools: Type.Array(Type.String()),
  denied_tools: Type.Array(Type.String()),
  requires_approval: Type.Boolean(),
  timeout_ms: Type.Integer(),
};

export const Config = Type.Object(
  {
    id: Uuid,
    ...Document,
    secret_refs: Type.Array(Type.String(), { description: 'the console secrets this configuration references (names)' }),
    revision: Type.Integer({ minimum: 1 }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);
export const ConfigPage = Type.Object(
  { items: Type.Array(Config), has_more: Type.Boolean(), cursor: Type.Optional(Type.String()) },
  { additionalProperties: false },
);
export const ConfigListQuery = Type.Object(
  { limit: Type.Optional(Limit), cursor: Type.Optional(Uuid), name: Type.Optional(Name), kind: Type.Optional(Kind) },
  { additionalProperties: false },
);
export const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false });

export const ConfigRevision = Type.Object(
  {
    config_id: Uuid,
    revision: Type.Integer({ minimum: 1 }),
    change: Type.Union([Type.Literal('create'), Type.Literal('replace'), Type.Literal('delete')]),
    config: Type.Object(Document, { additionalProperties: false }),
    actor: Type.String(),
    created_at: Timestamp,
  },
  { additionalProperties: false },
);
export const RevisionPage = Type.Object({ items: Type.Array(ConfigRevision), has_more: Type.Boolean() }, { additionalProperties: false });

export const CheckResult = Type.Object(
  {
    id: Uuid,
    revision: Type.Integer(),
    ok: Type.Literal(true),
    secrets: Type.Array(Type.String({ description: 'names of the references that resolved now (never values)' })),
  },
  { additionalProperties: false },
);
