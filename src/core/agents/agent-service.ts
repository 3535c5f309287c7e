/**
 * Agents of a tenant: create, read, list (keyset pages), merge-patch with optimistic concurrency,
 * delete. PATCH semantics (docs/accessmap.md "Agents"): absent fields stay as they are; `labels`
 * is merged key by key per RFC 7396 (a `null` value removes that label); `version` must equal the
 * stored version or the call fails with 409 `conflict` and nothing changes.
 */
import type { Transaction } from 'kysely';
import { errors } from '../../contract/errors.js';
import type { Database } from '../../store/schema.js';
import { nowTimestamp } from '../../ledger/time.js';
import { newId } from '../../store/ids.js';
import type { Store } from '../../store/store-types.js';
import { decodeCursor, pageOf } from '../../contract/cursor.js';
import { assertTenantWritable, isUniqueViolation } from '../../http/request-scope.js';
import type { RecordHooks } from '../../contract/record-hooks.js';

export const AGENT_STATUSES = ['active', 'paused', 'disabled'] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

/** An agent as served on the wire. */
export interface Agent {
  id: string;
  tenant_id: string;
  name: string;
  kind: string;
  external_id: string;
  status: string;
  labels: Record<string, string>;
  version: number;
  created_at: string;
  updated_at: string;
}

export interface AgentCreate {
  name: string;
  kind?: string;
  external_id?: string;
  status?: AgentStatus;
  labels?: Record<string, string>;
}

export interface AgentPatch {
  version: number;
  name?: string;
  kind?: string;
  external_id?: string;
  status?: AgentStatus;
  labels?: Record<string, string | null>;
}

export interface AgentListFilter {
  limit: number;
  cursor?: string;
  status?: string;
  kind?: string;
}

type Row = {
  id: string;
  tenant_id: string;
  name: string;
  kind: string;
  external_id: string;
  status: string;
  labels: string;
  version: number;
  created_at: string;
  updated_at: string;
};
/** A row as selected: `labels` is typed optional (see schema-accessmap.ts) but always present after migration 5. */
type Selected = Omit<Row, 'labels'> & { labels?: string | undefined };

const COLUMNS = ['id', 'tenant_id', 'name', 'kind', 'external_id', 'status', 'labels', 'version', 'created_at', 'updated_at'] as const;

function toAgent(r: Selected): Agent {
  return { ...r, version: Number(r.version), labels: JSON.parse(r.labels ?? '{}') as Record<string, string> };
}

/** Stable label text: keys sorted, so equal label sets store equal text. */
function labelsText(labels: Record<string, string>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}

const conflictOnExternalId = (err: unknown): never => {
  if (isUniqueViolation(err)) throw errors.conflict('another agent of this tenant has that external_id');
  throw err;
};

/** Runs inside the change's transaction once it is made (the route records its event there: src/events/event-log.ts). */
export type InTransaction = (tx: Transaction<Database>, agent: Agent) => Promise<void> | void;

/** Creates an agent (version 1). */
export async function createAgent(store: Store, tenant: string, input: AgentCreate, inTx?: InTransaction): Promise<Agent> {
  const now = nowTimestamp();
  const row: Row = {
    id: newId(),
    tenant_id: tenant,
    name: input.name,
    kind: input.kind ?? 'agent',
    external_id: input.external_id ?? '',
    status: input.status ?? 'active',
    labels: labelsText(input.labels ?? {}),
    version: 1,
    created_at: now,
    updated_at: now,
  };
  return store
    .withTenant(tenant, async (tx) => {
      await assertTenantWritable(tx, tenant);
      await tx.insertInto('agents').values(row).execute();
      const agent = toAgent(row);
      await inTx?.(tx, agent);
      return agent;
    })
    .catch(conflictOnExternalId);
}

/** One agent, or 404 (another tenant's agent is 404 too: no existence oracle). */
export async function getAgent(store: Store, tenant: string, id: string): Promise<Agent> {
  const row = await store.withTenant(tenant, (tx) =>
    tx.selectFrom('agents').select(COLUMNS).where('tenant_id', '=', tenant).where('id', '=', id).executeTakeFirst(),
  );
  if (!row) throw errors.notFound('agent');
  return toAgent(row);
}

/** A keyset page of agents in id (creation) order. */
export async function listAgents(
  store: Store,
  tenant: string,
  f: AgentListFilter,
): Promise<{ items: Agent[]; has_more: boolean; cursor?: string }> {
  const after = f.cursor ? decodeCursor(f.cursor) : undefined;
  const rows = await store.withTenant(tenant, (tx) => {
    let q = tx.selectFrom('agents').select(COLUMNS).where('tenant_id', '=', tenant);
    if (after) q = q.where('id', '>', after);
    if (f.status) q = q.where('status', '=', f.status);
    if (f.kind) q = q.where('kind', '=', f.kind);
    return q
      .orderBy('id')
      .limit(f.limit + 1)
      .execute();
  });
  return pageOf(rows.map(toAgent), f.limit);
}

/** Applies a merge patch if `patch.version` is current; 404 if absent, 409 if stale. */
export async function patchAgent(
  store: Store,
  tenant: string,
  id: string,
  patch: AgentPatch,
  inTx?: (tx: Transaction<Database>, agent: Agent, changed: string[]) => Promise<void> | void,
): Promise<{ agent: Agent; changed: string[] }> {
  return store
    .withTenant(tenant, async (tx) => {
      await assertTenantWritable(tx, tenant);
      const cur = await tx.selectFrom('agents').select(COLUMNS).where('tenant_id', '=', tenant).where('id', '=', id).executeTakeFirst();
      if (!cur) throw errors.notFound('agent');
      if (Number(cur.version) !== patch.version) throw errors.conflict(`version mismatch: the agent is at version ${cur.version}`);
      const labels = JSON.parse(cur.labels ?? '{}') as Record<string, string>;
      for (const [k, v] of Object.entries(patch.labels ?? {})) {
        if (v === null) delete labels[k];
        else labels[k] = v;
      }
      const next: Row = {
        ...cur,
        name: patch.name ?? cur.name,
        kind: patch.kind ?? cur.kind,
        external_id: patch.external_id ?? cur.external_id,
        status: patch.status ?? cur.status,
        labels: labelsText(labels),
        version: Number(cur.version) + 1,
        updated_at: nowTimestamp(),
      };
      const changed = (['name', 'kind', 'external_id', 'status', 'labels'] as const).filter((k) => next[k] !== (cur[k] ?? '{}'));
      // The version guard in the WHERE makes the check-and-set atomic on Postgres' concurrent writers too.
      const res = await tx
        .updateTable('agents')
        .set({
          name: next.name,
          kind: next.kind,
          external_id: next.external_id,
          status: next.status,
          labels: next.labels,
          version: next.version,
          updated_at: next.updated_at,
        })
        .where('tenant_id', '=', tenant)
        .where('id', '=', id)
        .where('version', '=', patch.version)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) throw errors.conflict('version mismatch: the agent changed concurrently');
      const agent = toAgent(next);
      await inTx?.(tx, agent, changed);
      return { agent, changed };
    })
    .catch(conflictOnExternalId);
}

/**
 * Deletes an agent; `version`, when given, must be current. Other modules' guards may refuse it and
 * their cascades (the access map forgets the agent's edges) run in the same transaction.
 */
export async function deleteAgent(
  store: Store,
  hooks: RecordHooks,
  tenant: string,
  id: string,
  version?: number,
  inTx?: InTransaction,
): Promise<Agent> {
  return store.withTenant(tenant, async (tx) => {
    await assertTenantWritable(tx, tenant);
    const cur = await tx.selectFrom('agents').select(COLUMNS).where('tenant_id', '=', tenant).where('id', '=', id).executeTakeFirst();
    if (!cur) throw errors.notFound('agent');
    if (version !== undefined && Number(cur.version) !== version)
      throw errors.conflict(`version mismatch: the agent is at version ${cur.version}`);
    await hooks.run('delete', { store, tx, tenant, kind: 'agent', id, record: cur });
    await tx.deleteFrom('agents').where('tenant_id', '=', tenant).where('id', '=', id).execute();
    const agent = toAgent(cur);
    await inTx?.(tx, agent);
    return agent;
  });
}
