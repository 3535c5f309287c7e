/**
 * Agent references for other areas (kill switches, legal holds…): an agent is named by its id, its
 * external id or its name; {@link resolveAgentRef} turns that into the id when a rule is written,
 * {@link agentKeys} gives the forms of the agents a rule names, to match requests by id later.
 * Other areas call these instead of reading the agents table.
 */
import type { Transaction } from 'kysely';
import { isUuidText, resolveReference, type RefCandidate, type RefLookup } from '../../contract/references.js';
import type { Database } from '../../store/schema.js';
import type { Store } from '../../store/store-types.js';

type Tx = Transaction<Database>;

async function matching(tx: Tx, tenant: string, ref: string): Promise<RefCandidate[]> {
  const rows = await tx
    .selectFrom('agents')
    .select(['id', 'name', 'external_id'])
    .where('tenant_id', '=', tenant)
    .where((eb) => {
      // An id column compared with a non-UUID would be an error on Postgres (uuid type): only ask when it can match.
      const ors = [eb('name', '=', ref), eb('external_id', '=', ref)];
      if (isUuidText(ref)) ors.push(eb('id', '=', ref.toLowerCase()));
      return eb.or(ors);
    })
    .orderBy('id')
    .limit(50)
    .execute();
  return rows.map((r) => ({ id: r.id, label: r.name }));
}

/** The lookup of the shared resolver for agents of `tenant`, inside `tx`. */
export function agentLookup(tx: Tx, tenant: string): RefLookup {
  return {
    kind: 'agent',
    forms: 'id, name or external id',
    exact: (ref) => matching(tx, tenant, ref),
    names: async () => {
      const rows = await tx.selectFrom('agents').select(['name', 'external_id']).where('tenant_id', '=', tenant).limit(10_000).execute();
      return rows.flatMap((r) => [r.name, r.external_id]);
    },
  };
}

/** The agent `ref` (id, external id or name) denotes: 404 with close names, 409 `ambiguous`. */
export async function resolveAgentRef(store: Store, tenant: string, ref: string, tx?: Tx): Promise<RefCandidate> {
  if (tx) return resolveReference(agentLookup(tx, tenant), ref);
  return store.withTenant(tenant, (t) => resolveReference(agentLookup(t, tenant), ref));
}

/** The id, name and external id of each of `ids` (agents that exist), for matching every form a caller may send. */
export async function agentKeys(
  tx: Tx,
  tenant: string,
  ids: readonly string[],
): Promise<Array<{ id: string; name: string; external_id: string }>> {
  if (ids.length === 0) return [];
  return tx.selectFrom('agents').select(['id', 'name', 'external_id']).where('tenant_id', '=', tenant).where('id', 'in', ids).execute();
}
