/**
 * Kill switches: a row for the tenant (`scope` = `tenant`) or one agent (`agent:<agent id>`, or
 * `agent:token:<id>` for a credential) forces every decision of the policy endpoint to `deny`,
 * whatever the policy says. The agent is named by id, external id or name when the switch is
 * engaged and stored by its id ({@link engageScope}); a decision's agent reference, in whichever of
 * those forms the hook sends it, is resolved to ids before matching ({@link switchFor}). The decision
 * path reads switches through a per-process cache refreshed at most once per {@link KILL_TTL_MS}
 * and dropped at once when this process changes one.
 */
import { nowTimestamp } from '../../ledger/time.js';
import type { Transaction } from 'kysely';
import type { Database } from '../../store/schema.js';
import type { Store } from '../../store/store.js';
import { errors } from '../../contract/errors.js';
import { assertTenantWritable } from '../../http/request-scope.js';
import { agentIdsNamedBy, resolveAgentRef } from '../../core/agents/agent-refs.js';
import { tokenLookup } from '../../core/tokens/token-refs.js';
import { userLookup } from '../../core/users/user-refs.js';
import { resolveReference } from '../../contract/references.js';

export interface KillSwitch {
  scope: string;
  reason: string;
  created_by: string;
  created_at: string;
}

export const KILL_TTL_MS = 1000;
const cache = new Map<string, { at: number; value: Map<string, KillSwitch>; pending?: Promise<Map<string, KillSwitch>> }>();

/** A credential's actor: `token:` an API key's id or name, `user:` a member's id or e-mail. */
const ACTOR = /^(token|user):(.+)$/;

/**
 * The scope a switch is stored under: `tenant`; `agent:token:<key id>` or `agent:user:<user id>` for
 * a credential (the actor the decision endpoint sees); `agent:<agent id>` for an agent named by id,
 * external id or name. Unknown: 404 with close names; several: 409 `ambiguous`.
 */
export async function engageScope(store: Store, tenant: string, agent: string | undefined): Promise<string> {
  if (agent === undefined) return 'tenant';
  const actor = ACTOR.exec(agent);
  if (actor) {
    const [, kind, ref] = actor as unknown as [string, 'token' | 'user', string];
    const lookup = kind === 'token' ? tokenLookup : userLookup;
    const found = await store.withTenant(tenant, (tx) => resolveReference(lookup(tx, tenant), ref));
    return `agent:${kind}:${found.id}`;
  }
  return `agent:${(await resolveAgentRef(store, tenant, agent)).id}`;
}

/**
 * The scope to release: the switch stored under exactly `agent` when one is (a deleted agent's id,
 * a row written before references were resolved), else the engaged scope `agent` resolves to.
 */
export async function releaseScope(store: Store, tenant: string, agent: string | undefined): Promise<string> {
  if (agent !== undefined) {
    const engaged = await listKillSwitches(store, tenant);
    const literal = engaged.find((k) => k.scope === `agent:${agent}` || k.scope === `agent:${agent.toLowerCase()}`);
    if (literal) return literal.scope;
  }
  return engageScope(store, tenant, agent);
}

/**
 * The engaged switch that stops a decision, matched by id: the tenant's, the calling credential's,
 * or one of an agent the hook's reference denotes. The reference may be the agent's id, external
 * id or name; when it could denote several agents, any of them being stopped stops it (fail closed).
 * A reference that denotes no agent still meets the tenant's switch.
 */
export async function switchFor(
  store: Store,
  tenant: string,
  switches: Map<string, KillSwitch>,
  agentRef: string | undefined,
  actor: string,
): Promise<KillSwitch | undefined> {
  const direct =
    switches.get('tenant') ??
    switches.get(`agent:${actor}`) ??
    (agentRef !== undefined ? (switches.get(`agent:${agentRef}`) ?? switches.get(`agent:${agentRef.toLowerCase()}`)) : undefined);
  if (direct || agentRef === undefined) return direct;
  // Only when some agent is stopped does a decision pay for the lookup of its agent.
  if (![...switches.keys()].some((k) => k.startsWith('agent:'))) return undefined;
  for (const id of await agentIdsNamedBy(store, tenant, agentRef)) {
    const sw = switches.get(`agent:${id}`);
    if (sw) return sw;
  }
  return undefined;
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
