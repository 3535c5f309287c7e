/**
 * The managed agent settings surfaces and their checks. Each surface is a JSON document an agent
 * host installs as one file (Claude Code reads managed settings from `/etc/claude-code/` on Linux,
 * `/Library/Application Support/ClaudeCode/` on macOS):
 *
 * | surface | file on the host | what it holds |
 * |---|---|---|
 * | `managed-settings` | `managed-settings.json` | the whole managed settings object (permissions, env, hooks, MCP allow/deny lists,
 * sandbox…) |
 * | `hooks` | `managed-settings.json` (`hooks` only) | the hook commands per hook event |
 * | `managed-mcp` | `managed-mcp.json` | the MCP servers every user gets |
 * | `sandbox` | `managed-settings.json` (`sandbox` only) | the bash sandbox |
 *
 * A known key with a wrong type is an error; a hook event name that does not exist is an error (a
 * typo would mean the hook never runs: fail open); an unknown top-level key of `managed-settings`
 * is a warning (newer agent versions add settings). An inline credential is an error everywhere
 * (src/secrets/inline-credentials.ts). The artifact is the document re-serialised as JSON with two
 * spaces and a final newline, so its bytes (and its sha256) do not depend on the author's spacing.
 */
import Type, { type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { findInlineCredentials, type InlineCredential } from '../../secrets/inline-credentials.js';

export const SURFACES = ['managed-settings', 'hooks', 'managed-mcp', 'sandbox'] as const;
export type Surface = (typeof SURFACES)[number];

/** The governance revision surface a claude-policy surface is stored under (never addressable by /pdp routes). */
export const storedSurface = (s: Surface): string => `claude:${s}`;

export const HOOK_EVENTS = [
  'PreToolUse',
  'PostToolUse',
  'Notification',
  'UserPromptSubmit',
  'Stop',
  'SubagentStop',
  'PreCompact',
  'SessionStart',
  'SessionEnd',
] as const;

const Strings = Type.Array(Type.String({ maxLength: 4096 }), { maxItems: 1000 });
const HookCommand = Type.Object(
  {
    type: Type.Literal('command'),
    command: Type.String({ minLength: 1, maxLength: 8192 }),
    timeout: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600 })),
  },
  { additionalProperties: false },
);
const HookMatcher = Type.Object(
  { matcher: Type.Optional(Type.String({ maxLength: 1000 })), hooks: Type.Array(HookCommand, { minItems: 1, maxItems: 50 }) },
  { additionalProperties: false },
);
const Hooks = Type.Object(Object.fromEntries(HOOK_EVENTS.map((e) => [e, Type.Optional(Type.Array(HookMatcher, { maxItems: 100 }))])), {
  additionalProperties: false,
});
const McpServer = Type.Object(
  {
    type: Type.Optional(Type.Union([Type.Literal('stdio'), Type.Literal('http'), Type.Literal('sse')])),
    command: Type.Optional(Type.String({ minLength: 1 })),
    args: Type.Optional(Strings),
    env: Type.Optional(Type.Record(Type.String(), Type.String())),
    url: Type.Optional(Type.String({ pattern: '^(https://|http://(127\\.0\\.0\\.1|localhost|\\[::1\\])[:/])' })),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
  },
  { additionalProperties: false },
);
const McpMatch = Type.Object(
  { serverName: Type.Optional(Type.String()), serverCommand: Type.Optional(Strings), serverUrl: Type.Optional(Type.String()) },
  { additionalProperties: false },
);
const Sandbox = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    autoAllowBashIfSandboxed: Type.Optional(Type.Boolean()),
    allowUnsandboxedCommands: Type.Optional(Type.Boolean()),
    excludedCommands: Type.Optional(Strings),
    enableWeakerNestedSandbox: Type.Optional(Type.Boolean()),
    network: Type.Optional(
      Type.Object(
        {
          allowUnixSockets: Type.Optional(Strings),
          allowLocalBinding: Type.Optional(Type.Boolean()),
          httpProxyPort: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
          socksProxyPort: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
const Permissions = Type.Object(
  {
    allow: Type.Optional(Strings), deny: Type.Optional(Strings), ask: Type.Optional(Strings), additionalDirectories: Type.Optional(Strings),
    defaultMode: Type.Optional(Type.Union(['default', 'acceptEdits', 'plan', 'bypassPermissions'].map((m) => Type.Literal(m)))),
    disableBypassPermissionsMode: Type.Optional(Type.Literal('disable')),
  },
  { additionalProperties: false },
);

/** The managed-settings keys whose shape is checked; other top-level keys are warnings. */
const SETTINGS_KEYS: Record<string, TSchema> = {
  permissions: Permissions,
  env: Type.Record(Type.String(), Type.String()),
  hooks: Hooks,
  sandbox: Sandbox,
  model: Type.String(),
  apiKeyHelper: Type.String(),
  otelHeadersHelper: Type.String(),
  awsAuthRefresh: Type.String(),
  awsCredentialExport: Type.String(),
  cleanupPeriodDays: Type.Integer({ minimum: 0 }),
  includeCoAuthoredBy: Type.Boolean(),
  forceLoginMethod: Type.Union([Type.Literal('claudeai'), Type.Literal('console')]),
  forceLoginOrgUUID: Type.String(),
  enableAllProjectMcpServers: Type.Boolean(),
  enabledMcpjsonServers: Strings,
  disabledMcpjsonServers: Strings,
  allowedMcpServers: Type.Array(McpMatch),
  deniedMcpServers: Type.Array(McpMatch),
  disableAllHooks: Type.Boolean(),
  allowManagedHooksOnly: Type.Boolean(),
  companyAnnouncements: Strings,
  outputStyle: Type.String(),
  statusLine: Type.Object(
    { type: Type.Literal('command'), command: Type.String(), padding: Type.Optional(Type.Integer()) },
    { additionalProperties: false },
  ),
};

const SCHEMAS: Record<Surface, TSchema> = {
  'managed-settings': Type.Object(Object.fromEntries(Object.entries(SETTINGS_KEYS).map(([k, s]) => [k, Type.Optional(s)])), {
    additionalProperties: true,
  }),
  hooks: Type.Object(
    { hooks: Hooks, disableAllHooks: Type.Optional(Type.Boolean()), allowManagedHooksOnly: Type.Optional(Type.Boolean()) },
    { additionalProperties: false },
  ),
  'managed-mcp': Type.Object(
    { mcpServers: Type.Record(Type.String({ pattern: '^[A-Za-z0-9_.-]{1,100}$' }), McpServer) },
    { additionalProperties: false },
  ),
  sandbox: Type.Object({ sandbox: Sandbox }, { additionalProperties: false }),
};
const CHECKERS = Object.fromEntries(SURFACES.map((s) => [s, Compile(SCHEMAS[s])])) as Record<Surface, ReturnType<typeof Compile>>;

export interface Validation {
  valid: boolean;
  errors: string[];
  warnings: string[];
  /** inline credentials found (each is also an error); paths only, never values */
  credentials: InlineCredential[];
  /** the artifact's text when the document parses as a JSON object */
  artifact: string | null;
}

/** Parses and checks a document of `surface`; the artifact text is set whenever it parses. */
export function validateDocument(surface: Surface, content: string): Validation {
  let doc: unknown;
  try {
    doc = JSON.parse(content);
  } catch (err) {
    return { valid: false, errors: [`not JSON: ${(err as Error).message}`], warnings: [], credentials: [], artifact: null };
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    return { valid: false, errors: ['the document must be a JSON object'], warnings: [], credentials: [], artifact: null };
  const errors: string[] = [];
  const warnings: string[] = [];
  const checker = CHECKERS[surface];
  if (!checker.Check(doc)) {
    for (const e of checker.Errors(doc)) {
      if (e.keyword === 'boolean' && e.message === 'schema is false') continue;
      const extra =
        e.keyword === 'additionalProperties'
          ? `: ${(e.params as { additionalProperties?: string[] }).additionalProperties?.join(', ')}`
          : '';
      errors.push(`${e.instancePath === '' ? '(root)' : e.instancePath} ${e.message}${extra}`);
    }
  }
  if (surface === 'managed-settings') {
    for (const k of Object.keys(doc))
      if (!(k in SETTINGS_KEYS)) warnings.push(`/${k} is not a setting svc knows; it is published as written`);
  }
  const servers =
    surface === 'managed-mcp'
      ? (doc as { mcpServers?: Record<string, { type?: string; command?: string; url?: string }> }).mcpServers
      : undefined;
  for (const [name, s] of Object.entries(servers ?? {})) {
    if (typeof s !== 'object' || s === null) continue;
    const t = s.type ?? 'stdio';
    if (t === 'stdio' && !s.command) errors.push(`/mcpServers/${name} is a stdio server without a command`);
    if (t !== 'stdio' && !s.url) errors.push(`/mcpServers/${name} is an ${t} server without a url`);
  }
  const credentials = findInlineCredentials(doc);
  for (const c of credentials) errors.push(`inline credential at ${c.path || '(root)'}: ${c.reason}`);
  return { valid: errors.length === 0, errors, warnings, credentials, artifact: `${JSON.stringify(doc, null, 2)}\n` };
}

/** The paths whose value differs between two documents (added, removed, changed), for dry-run. */
export function changedPaths(before: unknown, after: unknown, path = ''): Array<{ path: string; change: 'added' | 'removed' | 'changed' }> {
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (isObj(before) && isObj(after)) {
    const out: Array<{ path: string; change: 'added' | 'removed' | 'changed' }> = [];
    for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) {
      const p = `${path}/${k}`;
      if (!(k in before)) out.push({ path: p, change: 'added' });
      else if (!(k in after)) out.push({ path: p, change: 'removed' });
      else out.push(...changedPaths(before[k], after[k], p));
    }
    return out;
  }
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ path: path || '/', change: 'changed' }];
}
