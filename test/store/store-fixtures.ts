/** Row builders shared by the store case suites. */
import { randomUUID } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import type { AgentsTable, TenantsTable } from '../../src/store/schema.js';
import type { Store } from '../../src/store/store.js';
import { storeTimestamp } from '../../src/store/timestamp.js';

/** A valid tenant row with a fresh id. */
export function tenantRow(overrides: Partial<TenantsTable> = {}): TenantsTable {
  return {
    id: randomUUID(),
    name: 'Acme',
    region: 'eu',
    status: 'active',
    created_at: storeTimestamp(),
    deleted_at: null,
    ...overrides,
  };
}

/** A valid agent row of `tenantId` with a fresh id. */
export function agentRow(tenantId: string, overrides: Partial<AgentsTable> = {}): AgentsTable {
  const now = storeTimestamp();
  return {
    id: randomUUID(),
    tenant_id: tenantId,
    name: 'builder',
    kind: 'claude-code',
    external_id: '',
    status: 'active',
    version: 1,
    created_at: now,
    updated_at: now,
    ...overrides,
  };
}

/** Inserts a tenant through the global transaction and returns its id. */
export async function addTenant(store: Store, overrides: Partial<TenantsTable> = {}): Promise<string> {
  const row = tenantRow(overrides);
  await store.transaction((tx) => tx.insertInto('tenants').values(row).execute());
  return row.id;
}

/** Inserts `count` agents for `tenantId` and returns their ids. */
export async function addAgents(store: Store, tenantId: string, count: number): Promise<string[]> {
  const rows = Array.from({ length: count }, (_, i) => agentRow(tenantId, { name: `agent-${i}` }));
  await store.withTenant(tenantId, (tx) => tx.insertInto('agents').values(rows).execute());
  return rows.map((r) => r.id);
}

/**
 * The node number (migration 10) of agent or node `id`, as an expression for an edge row written
 * by hand: `origin_no: nodeNo(originId)`. The store numbers nodes as they are inserted.
 */
export function nodeNo(id: string): RawBuilder<number> {
  return sql<number>`coalesce((select no from agents where id = ${id}), (select no from access_nodes where id = ${id}))`;
}
