/**
 * Connector configuration (table `connectors`, migration 26): validated at configuration time — the
 * kind exists, `format` is a token of the kind's surface (refused naming the accepted ones, spec
 * rule 3), `config` matches the kind's schema (unknown fields refused) and the kind's own checks,
 * every secret reference exists — then stored. Secret values never reach this table: a secret field
 * holds `secret:<name>` and the runtime resolves it on every use.
 */
import type { Transaction } from 'kysely';
import { ApiError, errors } from '../../contract/errors.js';
import { authoringRefusal } from '../../events/egress/connect.js';
import { configChecker, type ConfigChecker } from './config-check.js';
import { FormatTokenError, parseFormatToken } from '../../encoders/registry.js';
import { SYSTEM_TENANT } from '../../ledger/record.js';
import { nowTimestamp } from '../../ledger/time.js';
import { newId } from '../../store/ids.js';
import type { Database } from '../../store/schema.js';
import type { Store } from '../../store/store.js';
import { registerSecretReferences, secretExists } from '../console/secrets-service.js';
import { CONNECTOR_KINDS, kindOf, type ConnectorKind } from './kinds/index.js';

type Tx = Transaction<Database>;

export const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const;
export type MinSeverity = (typeof SEVERITIES)[number];

export interface ConnectorSources {
  /** forward the audit ledger of the connector's tenant (or of every tenant) */
  ledger: boolean;
  /** forward the system chain too (logins, tokens, users, connector changes): all-tenants connectors only */
  system: boolean;
  /** forward these bus events (notifications, findings), at or above a severity; null: none */
  events: { types: string[]; min_severity: MinSeverity | null } | null;
}

export interface ConnectorInput {
  name: string;
  kind: string;
  tenant?: string | null;
  format?: string;
  config: Record<string, unknown>;
  enabled?: boolean;
  sources?: { ledger?: boolean; system?: boolean; events?: { types: string[]; min_severity?: MinSeverity | null } | null };
  max_attempts?: number;
  initial_interval_s?: number;
}

export interface ConnectorView {
  id: string;
  name: string;
  kind: string;
  /** null: every tenant */
  tenant: string | null;
  format: string;
  config: Record<string, unknown>;
  sources: ConnectorSources;
  enabled: boolean;
  max_attempts: number;
  initial_interval_s: number;
  secret_refs: string[];
  version: number;
  created_at: string;
  updated_at: string;
}

type Row = Database['connectors'];

/** Stored sources; rows written before the system chain could be forwarded have no `system`. */
function sourcesOf(text: string): ConnectorSources {
  const s = JSON.parse(text) as Partial<ConnectorSources>;
  return { ledger: s.ledger === true, system: s.system === true, events: s.events ?? null };
}

export function viewOf(r: Row): ConnectorView {
  return {
    id: r.id,
    name: r.name,
    kind: r.kind,
    tenant: r.scope_tenant_id,
    format: r.format,
    config: JSON.parse(r.config) as Record<string, unknown>,
    sources: sourcesOf(r.sources),
    enabled: Number(r.enabled) === 1,
    max_attempts: Number(r.max_attempts),
    initial_interval_s: Number(r.initial_interval_s),
    secret_refs: JSON.parse(r.secret_refs) as string[],
    version: Number(r.version),
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

const checkers = new Map<string, ConfigChecker>();

/** The surface whose tokens a kind's `format` takes (a fixed format is looked up as itself). */
export function formatOf(kind: ConnectorKind, token: string | undefined): string {
  if ('fixed' in kind.format) {
    if (token !== undefined && token !== kind.format.fixed)
      throw errors.badRequest(
        `format ${JSON.stringify(token)} is not accepted for ` + `connector kind ${kind.kind}; accepted: ${kind.format.fixed}`,
      );
    return kind.format.fixed;
  }
  try {
    return parseFormatToken(kind.format.surface, token);
  } catch (err) {
    if (err instanceof FormatTokenError) throw errors.badRequest(`${err.message} (connector kind ${kind.kind})`);
    throw err;
  }
}

/** The secret references a kind's config holds (fields named by the kind). */
export function secretRefsOf(kind: ConnectorKind, config: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const f of kind.secretFields) {
    const v = config[f];
    if (v === undefined) continue;
    if (typeof v !== 'string' || !/^secret:[a-z0-9][a-z0-9._-]{0,99}$/.test(v))
      throw errors.badRequest(
        `config.${f} must be a secret reference secret:<name> (store ` + `the value with PUT /v1/console/secrets), never the value itself`,
      );
    out.push(v);
  }
  return out;
}

/**
 * Where a connector's config sends to, for the egress guard's authoring check: `url` (the HTTP
 * kinds and S3) or `host` and `port` (syslog; its default ports). Kinds without either write locally.
 */
function destinationOf(config: unknown): { host: string; port: number } | null {
  const c = config as { url?: unknown; host?: unknown; port?: unknown; transport?: unknown };
  if (typeof c.url === 'string') {
    const u = new URL(c.url);
    return { host: u.hostname, port: Number(u.port) || (u.protocol === 'http:' ? 80 : 443) };
  }
  if (typeof c.host === 'string') {
    const port = typeof c.port === 'number' ? c.port : (c.transport ?? 'tls') === 'tls' ? 6514 : 514;
    return { host: c.host, port };
  }
  return null;
}

/** Validates an input and returns the row values it would store (everything but ids and times). */
/** How the catalog knows an event type: declared and durable (`true`), unknown, or in-process only (never in the log). */
export type EventTypeCheck = (t: string) => boolean | 'in-process';

export async function validateConnector(
  store: Store,
  input: ConnectorInput,
  knownEventType: EventTypeCheck,
): Promise<Omit<Row, 'id' | 'version' | 'created_at' | 'updated_at'>> {
  const kind = kindOf(input.kind);
  if (!kind)
    throw errors.badRequest(`unknown connector kind ${JSON.stringify(input.kind)}; ` + `known: ${Object.keys(CONNECTOR_KINDS).join(', ')}`);
  const format = formatOf(kind, input.format);
  let checker = checkers.get(kind.kind);
  if (!checker) checkers.set(kind.kind, (checker = configChecker(kind.configSchema)));
  if (!checker.check(input.config))
    throw errors.badRequest(
      `config of a ${kind.kind} connector: ` +
        `${checker
          .explain(input.config)
          .replace(/\(root\)/g, 'config')
          .replace(/^\//, 'config/')}`,
    );
  const problems = kind.validate?.(input.config) ?? [];
  if (problems.length > 0) throw errors.badRequest(`config of a ${kind.kind} connector: ${problems.join('; ')}`);
  const dest = destinationOf(input.config);
  const refused = dest === null ? null : await authoringRefusal(dest.host, dest.port);
  if (refused !== null) throw new ApiError('egress_refused', `config of a ${kind.kind} connector: ${refused}`);
  const refs = secretRefsOf(kind, input.config);
  for (const ref of refs)
    if (!(await secretExists(store, ref)))
      throw errors.badRequest(
        `config refers to ${ref}, which does not exist; store ` + `it first (PUT /v1/console/secrets or svc secrets set)`,
      );
  const tenant = input.tenant ?? null;
  if (tenant !== null) {
    const t = await store.transaction((tx) =>
      tx.selectFrom('tenants').select('id').where('id', '=', tenant).where('deleted_at', 'is', null).executeTakeFirst(),
    );
    if (!t) throw errors.notFound('tenant');
  }
  const ev = input.sources?.events ?? null;
  if (ev) {
    if (ev.types.length === 0)
      throw errors.badRequest('sources.events.types must name at least ' + 'one event type (or leave sources.events out)');
    const unknown = ev.types.filter((t) => knownEventType(t) === false);
    if (unknown.length > 0)
      throw errors.badRequest(`sources.events.types: unknown event type ` + `${unknown.map((t) => JSON.stringify(t)).join(', ')}`);
    // Connectors read the event log only: an in-process type would never be forwarded.
    const inProcess = ev.types.filter((t) => knownEventType(t) === 'in-process');
    if (inProcess.length > 0) {
      const names = inProcess.map((t) => JSON.stringify(t)).join(', ');
      throw errors.badRequest(`sources.events.types: ${names} are not written to the event log and cannot be forwarded`);
    }
  }
  const sources: ConnectorSources = {
    ledger: input.sources?.ledger ?? true,
    system: input.sources?.system ?? false,
    events: ev ? { types: [...new Set(ev.types)].sort(), min_severity: ev.min_severity ?? null } : null,
  };
  if (!sources.ledger && !sources.system && !sources.events)
    throw errors.badRequest('sources: a connector forwards the ledger, the system chain, events, or a mix');
  // The system chain is the whole server's (every tenant's logins and tokens): not for a connector of one tenant.
  if (sources.system && tenant !== null)
    throw errors.badRequest('sources.system forwards the system chain of the whole server: only on an all-tenants connector (tenant null)');
  return {
    name: input.name,
    kind: kind.kind,
    scope_tenant_id: tenant,
    format,
    config: JSON.stringify(input.config),
    sources: JSON.stringify(sources),
    enabled: input.enabled === false ? 0 : 1,
    max_attempts: input.max_attempts ?? 12,
    initial_interval_s: input.initial_interval_s ?? 5,
    secret_refs: JSON.stringify(refs),
  };
}

/** Creates or replaces a connector by name; returns it and whether it was created. */
export async function putConnector(
  store: Store,
  values: Awaited<ReturnType<typeof validateConnector>>,
): Promise<{ view: ConnectorView; created: boolean; previous: ConnectorView | null }> {
  return store.transaction(async (tx) => {
    const now = nowTimestamp();
    const cur = await tx.selectFrom('connectors').selectAll().where('name', '=', values.name).executeTakeFirst();
    if (cur) {
      await tx
        .updateTable('connectors')
        .set({ ...values, version: Number(cur.version) + 1, updated_at: now })
        .where('id', '=', cur.id)
        .execute();
      const row = await tx.selectFrom('connectors').selectAll().where('id', '=', cur.id).executeTakeFirstOrThrow();
      return { view: viewOf(row), created: false, previous: viewOf(cur) };
    }
    const row: Row = { id: newId(), ...values, version: 1, created_at: now, updated_at: now };
    await tx.insertInto('connectors').values(row).execute();
    return { view: viewOf(row), created: true, previous: null };
  });
}

/**
 * The chains a connector's lanes may run on: every tenant (deleted ones too, with `all`) and the
 * system chain, whose lane rows carry SYSTEM_TENANT as their tenant (migration 32).
 */
export async function laneTenants(store: Store, all: boolean): Promise<string[]> {
  const rows = await store.transaction((tx) => {
    const q = tx.selectFrom('tenants').select('id');
    return (all ? q : q.where('deleted_at', 'is', null)).execute();
  });
  return [...rows.map((t) => t.id), SYSTEM_TENANT];
}

export async function listConnectors(store: Store): Promise<ConnectorView[]> {
  const rows = await store.transaction((tx) => tx.selectFrom('connectors').selectAll().orderBy('name').execute());
  return rows.map(viewOf);
}

export async function getConnector(store: Store, name: string): Promise<ConnectorView | undefined> {
  const r = await store.transaction((tx) => tx.selectFrom('connectors').selectAll().where('name', '=', name).executeTakeFirst());
  return r ? viewOf(r) : undefined;
}

/** Deletes a connector, its cursors and deliveries in every tenant; undefined when there is none. */
export async function deleteConnector(store: Store, name: string): Promise<ConnectorView | undefined> {
  const r = await store.transaction((tx) => tx.selectFrom('connectors').selectAll().where('name', '=', name).executeTakeFirst());
  if (!r) return undefined;
  for (const tenant of await laneTenants(store, true)) {
    await store.withTenant(tenant, async (tx) => {
      const lanes = (
        await tx.selectFrom('connector_cursors').select('id').where('tenant_id', '=', tenant).where('connector_id', '=', r.id).execute()
      ).map((x) => x.id);
      if (lanes.length === 0) return;
      await tx.deleteFrom('event_deliveries').where('tenant_id', '=', tenant).where('subscription_id', 'in', lanes).execute();
      await tx.deleteFrom('connector_cursors').where('tenant_id', '=', tenant).where('connector_id', '=', r.id).execute();
    });
  }
  await store.transaction((tx) => tx.deleteFrom('connectors').where('id', '=', r.id).execute());
  return viewOf(r);
}

/** `GET /v1/console/secrets` names the connectors that reference each secret (`connector:<name>`). */
registerSecretReferences(async (tx: Tx) => {
  const rows = await tx.selectFrom('connectors').select(['name', 'secret_refs']).execute();
  return rows.flatMap((r) =>
    (JSON.parse(r.secret_refs) as string[]).map((ref) => ({ secret: ref.replace(/^secret:/, ''), by: `connector:${r.name}` })),
  );
});
