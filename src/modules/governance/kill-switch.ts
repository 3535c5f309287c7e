/**
 * Kill switches: a row for the tenant (`scope` = `tenant`) or one agent (`agent:<id>`, matching the
 * hook's `agent_id` or the calling credential's actor) forces every decision of the policy endpoint
 * to `deny`, whatever the policy says. The decision path reads them through a per-process cache
 * refreshed at most once per {@link KILL_TTL_MS} and dropped at once when this process changes one.
 */
import { nowTimestamp } from '../../ledger/time.js';
import type { Transaction } from 'kysely';
import type { Database } from '../../store/schema.js';
import type { Store } from '../../store/store.js';
import { errors } from '../../contract/errors.js';
import { assertTenantWritable } from '../../http/request-scope.js';

export interface KillSwitch {
  scope: string;
  reason: string;
  created_by: string;
  created_at: string;
}

export const KILL_TTL_MS = 1000;
const cache = new Map<string, { at: number; value: Map<string, KillSwitch>; pending?: Promise<Map<string, KillSwitch>> }>();

export function scopeOf(agent: string | undefined): string {
  return agent === undefined ? 'tenant' : `agent:${agent}`;
}

export async function listKillSwitches(store: Store, tenant: string): Promise<KillSwitch[]> {
  return store.withTenant(tenant, (tx) =>
    tx
      .selectFrom('gov_kill_switches')
      .select(['scope', 'reason', 'created_by', 'created_at'])
      .where('tenant_id', '=', tenant)
      .orderBy('scope')
      .execute(),
  );
}

/** Runs inside a switch change's transaction once it is written (the durable event log). */
export type KillSwitchInTx = (tx: Transaction<Database>, ks: KillSwitch) => Promise<void> | void;

/** Engages a switch (idempotent: engaging again keeps the first record; `inTx` runs only when it was not engaged). */
export async function engageKillSwitch(
  store: Store,
  tenant: string,
  scope: string,
  reason: string,
  actor: string,
  inTx?: KillSwitchInTx,
): Promise<KillSwitch> {
  const row = { tenant_id: tenant, scope, reason, created_by: actor, created_at: nowTimestamp() };
  const out = await store.withTenant(tenant, async (tx) => {
    await assertTenantWritable(tx, tenant);
    const cur = await tx
      .selectFrom('gov_kill_switches')
      .select(['scope', 'reason', 'created_by', 'created_at'])
      .where('tenant_id', '=', tenant)
      .where('scope', '=', scope)
      .executeTakeFirst();
    if (cur) return cur;
    await tx.insertInto('gov_kill_switches').values(row).execute();
    const ks = { scope, reason, created_by: actor, created_at: row.created_at };
    await inTx?.(tx, ks);
    return ks;
  });
  cache.delete(tenant);
  return out;
}

export async function releaseKillSwitch(
  store: Store,
  tenant: string,
  scope: string,
  inTx?: (tx: Transaction<Database>) => Promise<void> | void,
): Promise<void> {
  try {
    await store.withTenant(tenant, async (tx) => {
      const res = await tx.deleteFrom('gov_kill_switches').where('tenant_id', '=', tenant).where('scope', '=', scope).executeTakeFirst();
      if (Number(res.numDeletedRows) === 0) throw errors.notFound('kill switch');
      await inTx?.(tx);
    });
  } finally {
    cache.delete(tenant);
  }
}

/** The engaged switches of a tenant, by scope (cached briefly). */
export function killSwitches(store: Store, tenant: string): Map<string, KillSwitch> | Promise<Map<string, KillSwitch>> {
  const e = cache.get(tenant);
  if (e && Date.now() - e.at < KILL_TTL_MS) return e.value;
  if (e?.pending) return e.pending;
  const pending = listKillSwitches(store, tenant).then(
    (rows) => {
      const value = new Map(rows.map((r) => [r.scope, r]));
      cache.set(tenant, { at: Date.now(), value });
      return value;
    },
    (err: unknown) => {
      cache.delete(tenant);
      throw err;
    },
  );
  cache.set(tenant, { at: e?.at ?? 0, value: e?.value ?? new Map(), pending });
  return pending;
}
