/**
 * Kill switches: a row for the tenant (`scope` = `tenant`) or one agent (`agent:<agent id>`, or
 * `agent:token:<id>` for a credential) forces every decision of the policy endpoint to `deny`,
 * whatever the policy says. The agent is named by id, external id or name when the switch is
 * engaged and stored by its id ({@link engageScope}); a decision's agent reference, in whichever of
 * those forms the hook sends it, is matched to the stopped agents' ids ({@link switchFor}). The
 * decision path reads switches, with the id, name and external id of each stopped agent, through a
 * per-process cache refreshed at most once per {@link KILL_TTL_MS} and dropped at once when this
 * process changes one: a decision costs no transaction of its own, incident or not.
 */
import { nowTimestamp } from '../../ledger/time.js';
import type { Transaction } from 'kysely';
import type { Database } from '../../store/schema.js';
import type { Store } from '../../store/store.js';
import type { Services } from '../../serve/services.js';
import { errors } from '../../contract/errors.js';
import { assertTenantWritable } from '../../http/request-scope.js';
import { agentKeys, resolveAgentRef } from '../../core/agents/agent-refs.js';
import { tokenLookup } from '../../core/tokens/token-refs.js';
import { userLookup } from '../../core/users/user-refs.js';
import { isUuidText, resolveReference } from '../../contract/references.js';

export interface KillSwitch {
  scope: string;
  reason: string;
  created_by: string;
  created_at: string;
}

/** What decisions are matched against: the switches by scope, and every form of each stopped agent. */
export interface Engaged {
  byScope: Map<string, KillSwitch>;
  /** the id, name and external id of each agent an `agent:<id>` switch stops → that switch */
  byAgentRef: Map<string, KillSwitch>;
}

export const KILL_TTL_MS = 1000;
const cache = new Map<string, { at: number; value: Engaged; pending?: Promise<Engaged> }>();
const NONE: Engaged = { byScope: new Map(), byAgentRef: new Map() };

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
    const stored = `agent:${isUuidText(agent) ? agent.toLowerCase() : agent}`;
    const literal = engaged.find((k) => k.scope === stored);
    if (literal) return literal.scope;
  }
  return engageScope(store, tenant, agent);
}

/**
 * The engaged switch that stops a decision, matched by id: the tenant's, the calling credential's,
 * or one of an agent the hook's reference denotes, whether it sends the agent's id (any case), its
 * external id or its name. When the reference could denote several agents (a shared name), any of
 * them being stopped stops it (fail closed). A reference that denotes no agent still meets the
 * tenant's switch.
 */
export function switchFor(e: Engaged, agentRef: string | undefined, actor: string): KillSwitch | undefined {
  const first = e.byScope.get('tenant') ?? e.byScope.get(`agent:${actor}`);
  if (first || agentRef === undefined) return first;
  const ref = isUuidText(agentRef) ? agentRef.toLowerCase() : agentRef;
  // `agent:<ref>` as stored: an id, a credential actor, or a row migration 34 could not resolve.
  return e.byScope.get(`agent:${ref}`) ?? e.byAgentRef.get(ref);
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

/**
 * Drops a tenant's cached switches when one of its agents changes (the bus, after the commit): a
 * stopped agent's new name then meets its switch at the next decision, not a second later.
 */
export function startKillSwitchCache(services: Services): () => Promise<void> {
  const unsubscribe = services.events.subscribe({ name: 'governance-kill-switch-cache', types: [...AGENT_CHANGES] }, (e) => {
    cache.delete(e.tenant);
  });
  return async () => unsubscribe();
}

/** The agent events that may change which names a switch matches. */
export const AGENT_CHANGES = ['agent.updated', 'agent.deleted'] as const;

/** The switches and the stopped agents' forms, read in one transaction. */
async function loadEngaged(store: Store, tenant: string): Promise<Engaged> {
  return store.withTenant(tenant, async (tx) => {
    const rows = await tx
      .selectFrom('gov_kill_switches')
      .select(['scope', 'reason', 'created_by', 'created_at'])
      .where('tenant_id', '=', tenant)
      .execute();
    const byScope = new Map(rows.map((r) => [r.scope, r]));
    const ids = rows.map((r) => r.scope.slice('agent:'.length)).filter((ref, i) => rows[i]!.scope.startsWith('agent:') && isUuidText(ref));
    const byAgentRef = new Map<string, KillSwitch>();
    for (const a of await agentKeys(tx, tenant, ids)) {
      const sw = byScope.get(`agent:${a.id}`) as KillSwitch;
      for (const k of [a.id, a.name, a.external_id]) if (k !== '' && !byAgentRef.has(k)) byAgentRef.set(k, sw);
    }
    return { byScope, byAgentRef };
  });
}

/** The engaged switches of a tenant and the forms of the agents they stop (cached briefly). */
export function killSwitches(store: Store, tenant: string): Engaged | Promise<Engaged> {
  const e = cache.get(tenant);
  if (e && Date.now() - e.at < KILL_TTL_MS) return e.value;
  if (e?.pending) return e.pending;
  const pending = loadEngaged(store, tenant).then(
    (value) => {
      cache.set(tenant, { at: Date.now(), value });
      return value;
    },
    (err: unknown) => {
      cache.delete(tenant);
      throw err;
    },
  );
  cache.set(tenant, { at: e?.at ?? 0, value: e?.value ?? NONE, pending });
  return pending;
}
