/**
 * MCP server and tool configurations: every change (create, replace, delete) is a new immutable
 * revision; a replace is the whole object (fields left out take the defaults, never the stored
 * value). Credentials are only references (`secret:<name>`) into the console secrets store: an
 * inline credential is refused (src/secrets/inline-credentials.ts), a reference must name an
 * existing secret when written, and {@link resolveConfig} reads every value at the moment of use,
 * so a secret deleted since fails closed (`SecretUnavailableError`, 503 on the check route).
 * References are indexed in the global `cap_secret_refs`, so the secrets store lists who uses what.
 */
import type { Static } from 'typebox';
import type { Transaction } from 'kysely';
import { errors } from '../../contract/errors.js';
import { nowTimestamp } from '../../ledger/time.js';
import { newId } from '../../store/ids.js';
import type { Database } from '../../store/schema.js';
import type { Store } from '../../store/store.js';
import type { Sealer } from '../../secrets/sealing.js';
import type { Emit } from '../../events/bus.js';
import { assertTenantWritable, isUniqueViolation } from '../../http/request-scope.js';
import { registerSecretReferences, resolveSecret, secretExists, type SecretReference } from '../../core/console/secrets-service.js';
import { findInlineCredentials } from '../../secrets/inline-credentials.js';
import type { ConfigBody } from './schemas.js';

type Body = Static<typeof ConfigBody>;

/** The stored document: every field set. */
export interface ConfigDocument {
  name: string;
  kind: 'mcp_server' | 'tool';
  description: string;
  enabled: boolean;
  transport: 'stdio' | 'http' | 'sse' | null;
  command: string | null;
  args: string[];
  url: string | null;
  env: Record<string, string>;
  headers: Record<string, string>;
  server: string | null;
  tool: string | null;
  allowed_tools: string[];
  denied_tools: string[];
  requires_approval: boolean;
  timeout_ms: number;
}

export interface CapabilityConfig extends ConfigDocument {
  id: string;
  secret_refs: string[];
  revision: number;
  created_at: string;
  updated_at: string;
}

/** What a field left out of a create or replace becomes. */
export const CONFIG_DEFAULTS = {
  description: '',
  enabled: true,
  args: [],
  env: {},
  headers: {},
  allowed_tools: [],
  denied_tools: [],
  requires_approval: false,
  timeout_ms: 30000,
} as const;

const SECRET_REF = /^secret:([a-z0-9][a-z0-9._-]{0,99})$/;

/** Fills defaults, checks the kind's rules and refuses inline credentials. */
export function toDocument(b: Body): ConfigDocument {
  const problems: string[] = [];
  const server = b.kind === 'mcp_server';
  const doc: ConfigDocument = {
    name: b.name,
    kind: b.kind,
    description: b.description ?? CONFIG_DEFAULTS.description,
    enabled: b.enabled ?? CONFIG_DEFAULTS.enabled,
    transport: server ? (b.transport ?? 'stdio') : null,
    command: b.command ?? null,
    args: b.args ?? [],
    url: b.url ?? null,
    env: b.env ?? {},
    headers: b.headers ?? {},
    server: b.server ?? null,
    tool: b.tool ?? null,
    allowed_tools: b.allowed_tools ?? [],
    denied_tools: b.denied_tools ?? [],
    requires_approval: b.requires_approval ?? CONFIG_DEFAULTS.requires_approval,
    timeout_ms: b.timeout_ms ?? CONFIG_DEFAULTS.timeout_ms,
  };
  if (server) {
    if (doc.transport === 'stdio' && !doc.command) problems.push('a stdio mcp_server needs a command');
    if (doc.transport === 'stdio' && doc.url) problems.push('a stdio mcp_server takes no url');
    if (doc.transport !== 'stdio' && !doc.url) problems.push(`an ${doc.transport} mcp_server needs a url`);
    if (doc.transport !== 'stdio' && (doc.command || doc.args.length > 0))
      problems.push(`an ${doc.transport} mcp_server takes no command or args`);
    if (doc.server || doc.tool) problems.push('server and tool are fields of a tool configuration');
  } else {
    if (!doc.server || !doc.tool) problems.push('a tool configuration names its server (an mcp_server configuration) and its tool');
    if (
      b.transport ||
      doc.command ||
      doc.url ||
      doc.args.length > 0 ||
      Object.keys(doc.headers).length > 0 ||
      doc.allowed_tools.length > 0 ||
      doc.denied_tools.length > 0
    )
      problems.push('a tool configuration takes no transport, command, args, url, headers or tool lists (they belong to its server)');
  }
  const inline = findInlineCredentials({ env: doc.env, headers: doc.headers, args: doc.args, url: doc.url, command: doc.command });
  for (const c of inline) problems.push(`inline credential at ${c.path}: ${c.reason}`);
  for (const [where, map] of [
    ['env', doc.env],
    ['headers', doc.headers],
  ] as const) {
    for (const [k, v] of Object.entries(map))
      if (v.startsWith('secret:') && !SECRET_REF.test(v))
        problems.push(`${where}.${k} is not a valid reference (secret:<name>, name of lowercase letters, digits, . _ -)`);
  }
  if (problems.length > 0) throw errors.badRequest(problems.join('; '));
  return doc;
}

/** The secret names a document references, sorted and unique. */
export function secretRefs(doc: ConfigDocument): string[] {
  const names = new Set<string>();
  for (const v of [...Object.values(doc.env), ...Object.values(doc.headers)]) {
    const m = SECRET_REF.exec(v);
    if (m) names.add(m[1] as string);
  }
  return [...names].sort();
}

type Row = { id: string; name: string; revision: number | string; document: string; created_at: string; updated_at: string };
const toConfig = (r: Row): CapabilityConfig => {
  const doc = JSON.parse(r.document) as ConfigDocument;
  return {
    id: r.id,
    ...doc,
    secret_refs: secretRefs(doc),
    revision: Number(r.revision),
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
};

/** Before the tenant transaction (the secrets store is global: one writer on SQLite). */
async function checkSecretsExist(store: Store, doc: ConfigDocument): Promise<void> {
  const missing: string[] = [];
  for (const name of secretRefs(doc)) if (!(await secretExists(store, name))) missing.push(name);
  if (missing.length > 0)
    throw errors.badRequest(
      `referenced secret(s) do not exist: ${missing.join(', ')} (create them with svc secrets set or PUT /v1/console/secrets)`,
    );
}

async function checkServer(tx: Transaction<Database>, tenant: string, doc: ConfigDocument, selfId: string | null): Promise<void> {
  if (doc.kind === 'tool') {
    const s = await tx
      .selectFrom('cap_configs')
      .select(['id', 'kind'])
      .where('tenant_id', '=', tenant)
      .where('name', '=', doc.server as string)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (!s || s.kind !== 'mcp_server' || s.id === selfId)
      throw errors.badRequest(`no mcp_server configuration named ${JSON.stringify(doc.server)}`);
  }
}

async function indexReferences(tx: Transaction<Database>, tenant: string, id: string, doc: ConfigDocument | null): Promise<void> {
  await tx.deleteFrom('cap_secret_refs').where('owner_tenant', '=', tenant).where('config_id', '=', id).execute();
  const names = doc ? secretRefs(doc) : [];
  if (doc && names.length > 0)
    await tx
      .insertInto('cap_secret_refs')
      .values(names.map((secret_name) => ({ owner_tenant: tenant, config_id: id, config_name: doc.name, secret_name })))
      .execute();
}

const EVENT = { create: 'capability_config.created', replace: 'capability_config.replaced', delete: 'capability_config.deleted' } as const;

/** Records the change's event in the durable log inside the change's own transaction. */
function emitChange(
  emit: Emit | undefined,
  tx: Transaction<Database>,
  tenant: string,
  change: keyof typeof EVENT,
  c: { id: string; name: string; kind: string },
  revision: number,
): void | Promise<void> {
  return emit?.(
    { type: EVENT[change], tenant, subject: `capability_config/${c.id}`, data: { id: c.id, name: c.name, kind: c.kind, revision } },
    tx,
  );
}

const nameTaken = (name: string) => errors.conflict(`a configuration named ${JSON.stringify(name)} exists`);

async function current(tx: Transaction<Database>, tenant: string, id: string): Promise<Row> {
  const r = await tx
    .selectFrom('cap_configs')
    .select(['id', 'name', 'revision', 'document', 'created_at', 'updated_at'])
    .where('tenant_id', '=', tenant)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!r) throw errors.notFound('capability configuration');
  return r;
}

export async function createConfig(store: Store, tenant: string, body: Body, actor: string, emit?: Emit): Promise<CapabilityConfig> {
  const doc = toDocument(body);
  await checkSecretsExist(store, doc);
  const id = newId();
  const now = nowTimestamp();
  return store
    .withTenant(tenant, async (tx) => {
      await assertTenantWritable(tx, tenant);
      await checkServer(tx, tenant, doc, null);
      const document = JSON.stringify(doc);
      await tx
        .insertInto('cap_configs')
        .values({
          id,
          tenant_id: tenant,
          name: doc.name,
          kind: doc.kind,
          revision: 1,
          document,
          created_by: actor,
          created_at: now,
          updated_at: now,
          deleted_at: null,
        })
        .execute();
      await tx
        .insertInto('cap_config_revisions')
        .values({ tenant_id: tenant, config_id: id, revision: 1, change: 'create', document, actor, created_at: now })
        .execute();
      await indexReferences(tx, tenant, id, doc);
      await emitChange(emit, tx, tenant, 'create', { id, ...doc }, 1);
      return toConfig({ id, name: doc.name, revision: 1, document, created_at: now, updated_at: now });
    })
    .catch((err: unknown) => {
      if (isUniqueViolation(err)) throw nameTaken(doc.name);
      throw err;
    });
}

/** PUT: the body is the whole new object; what it leaves out takes the defaults. */
export async function replaceConfig(
  store: Store,
  tenant: string,
  id: string,
  body: Body,
  actor: string,
  emit?: Emit,
): Promise<{ before: CapabilityConfig; after: CapabilityConfig }> {
  const doc = toDocument(body);
  await checkSecretsExist(store, doc);
  const now = nowTimestamp();
  return store
    .withTenant(tenant, async (tx) => {
      await assertTenantWritable(tx, tenant);
      const cur = await current(tx, tenant, id);
      await checkServer(tx, tenant, doc, id);
      const revision = Number(cur.revision) + 1;
      const document = JSON.stringify(doc);
      const res = await tx
        .updateTable('cap_configs')
        .set({ name: doc.name, kind: doc.kind, revision, document, updated_at: now })
        .where('tenant_id', '=', tenant)
        .where('id', '=', id)
        .where('revision', '=', Number(cur.revision))
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) throw errors.conflict('the configuration changed concurrently; replace again');
      await tx
        .insertInto('cap_config_revisions')
        .values({ tenant_id: tenant, config_id: id, revision, change: 'replace', document, actor, created_at: now })
        .execute();
      await indexReferences(tx, tenant, id, doc);
      await emitChange(emit, tx, tenant, 'replace', { id, ...doc }, revision);
      return {
        before: toConfig(cur),
        after: toConfig({ id, name: doc.name, revision, document, created_at: cur.created_at, updated_at: now }),
      };
    })
    .catch((err: unknown) => {
      if (isUniqueViolation(err)) throw nameTaken(doc.name);
      throw err;
    });
}

/** Deletes (the last revision records it); tool configurations that name a deleted server stop resolving. */
export async function deleteConfig(store: Store, tenant: string, id: string, actor: string, emit?: Emit): Promise<CapabilityConfig> {
  const now = nowTimestamp();
  return store.withTenant(tenant, async (tx) => {
    await assertTenantWritable(tx, tenant);
    const cur = await current(tx, tenant, id);
    const revision = Number(cur.revision) + 1;
    await tx
      .updateTable('cap_configs')
      .set({ revision, updated_at: now, deleted_at: now })
      .where('tenant_id', '=', tenant)
      .where('id', '=', id)
      .execute();
    await tx
      .insertInto('cap_config_revisions')
      .values({ tenant_id: tenant, config_id: id, revision, change: 'delete', document: cur.document, actor, created_at: now })
      .execute();
    await indexReferences(tx, tenant, id, null);
    const gone = toConfig(cur);
    await emitChange(emit, tx, tenant, 'delete', gone, revision);
    return gone;
  });
}

export async function getConfig(store: Store, tenant: string, id: string): Promise<CapabilityConfig> {
  return toConfig(await store.withTenant(tenant, (tx) => current(tx, tenant, id)));
}

export async function listConfigs(store: Store, tenant: string, q: { limit: number; cursor?: string; name?: string; kind?: string }) {
  const rows = await store.withTenant(tenant, (tx) => {
    let s = tx
      .selectFrom('cap_configs')
      .select(['id', 'name', 'revision', 'document', 'created_at', 'updated_at'])
      .where('tenant_id', '=', tenant)
      .where('deleted_at', 'is', null);
    if (q.cursor) s = s.where('id', '>', q.cursor);
    if (q.name) s = s.where('name', '=', q.name);
    if (q.kind) s = s.where('kind', '=', q.kind);
    return s
      .orderBy('id')
      .limit(q.limit + 1)
      .execute();
  });
  const items = rows.slice(0, q.limit).map(toConfig);
  const last = items[items.length - 1];
  return { items, has_more: rows.length > q.limit, ...(rows.length > q.limit && last ? { cursor: last.id } : {}) };
}

/** Every revision of a configuration, newest first (a deleted configuration keeps its history). */
export async function listConfigRevisions(store: Store, tenant: string, id: string) {
  const rows = await store.withTenant(tenant, async (tx) => {
    const exists = await tx.selectFrom('cap_configs').select('id').where('tenant_id', '=', tenant).where('id', '=', id).executeTakeFirst();
    if (!exists) throw errors.notFound('capability configuration');
    return tx
      .selectFrom('cap_config_revisions')
      .selectAll()
      .where('tenant_id', '=', tenant)
      .where('config_id', '=', id)
      .orderBy('revision', 'desc')
      .limit(1001)
      .execute();
  });
  return {
    items: rows.slice(0, 1000).map((r) => ({
      config_id: r.config_id,
      revision: Number(r.revision),
      change: r.change as 'create' | 'replace' | 'delete',
      config: JSON.parse(r.document) as ConfigDocument,
      actor: r.actor,
      created_at: r.created_at,
    })),
    has_more: rows.length > 1000,
  };
}

/**
 * The configuration with every reference replaced by its value, read now: what a launcher of the
 * MCP server needs. Throws SecretUnavailableError when a referenced secret is gone: never a
 * configuration without its credential.
 */
export async function resolveConfig(
  store: Store,
  sealer: Sealer,
  tenant: string,
  id: string,
): Promise<{ config: CapabilityConfig; resolved: ConfigDocument }> {
  const config = await getConfig(store, tenant, id);
  const resolve = async (map: Record<string, string>) => {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(map)) out[k] = SECRET_REF.test(v) ? await resolveSecret(store, sealer, v) : v;
    return out;
  };
  const { id: _i, secret_refs: _s, revision: _r, created_at: _c, updated_at: _u, ...doc } = config;
  return { config, resolved: { ...doc, env: await resolve(doc.env), headers: await resolve(doc.headers) } };
}

async function capabilityReferences(tx: Transaction<Database>): Promise<SecretReference[]> {
  const rows = await tx.selectFrom('cap_secret_refs').select(['owner_tenant', 'config_name', 'secret_name']).execute();
  return rows.map((r) => ({ secret: r.secret_name, by: `capabilities:${r.owner_tenant}/${r.config_name}` }));
}

registerSecretReferences(capabilityReferences);
