/**
 * Migrations 35 and 36, the same steps on both backends: rows written before references were
 * resolved (DECISIONS.md Wave 3) named an agent, a user or a workspace by name, external id or
 * e-mail. Each such reference that names exactly one record of its tenant today is rewritten to
 * that record's id; one that names none or several is left as it was (docs/governance.md and
 * docs/compliance.md say how those still match, and how to replace them). Per tenant, so on
 * PostgreSQL `app.tenant_id` is set first and row-level security applies as for the service.
 */
import { sql, type Transaction } from 'kysely';
import type { MigrationDatabase } from './schema.js';

type Tx = Transaction<MigrationDatabase>;
type Bind = (tx: Tx, tenant: string) => Promise<void>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ACTOR = /^(token|user):/;

/** `set_config('app.tenant_id', …)` for the rest of the migration's transaction (PostgreSQL). */
export const bindPostgresTenant: Bind = async (tx, tenant) => {
  await sql`select set_config('app.tenant_id', ${tenant}, true)`.execute(tx);
};

async function tenants(tx: Tx): Promise<string[]> {
  return (await sql<{ id: string }>`select cast(id as text) as id from tenants order by id`.execute(tx)).rows.map((r) => r.id);
}

/** The ids of the records of `kind` that `ref` names in `tenant` (by id, or by the kind's names). */
async function idsNamed(tx: Tx, tenant: string, kind: string, ref: string): Promise<string[]> {
  const byId = UUID.test(ref) ? ref.toLowerCase() : '';
  let q;
  if (kind === 'agent')
    q = sql<{ id: string }>`select cast(id as text) as id from agents where tenant_id = ${tenant}
      and (cast(id as text) = ${byId} or name = ${ref} or external_id = ${ref})`;
  else if (kind === 'workspace')
    q = sql<{ id: string }>`select cast(id as text) as id from workspaces where tenant_id = ${tenant}
      and (cast(id as text) = ${byId} or display_name = ${ref} or root_path = ${ref})`;
  else if (kind === 'user')
    q = sql<{ id: string }>`select cast(u.id as text) as id from users u join memberships m on m.user_id = u.id
      where m.org_id = ${tenant} and (cast(u.id as text) = ${byId} or u.email = ${ref.trim().toLowerCase()})`;
  else return [];
  return [...new Set((await q.execute(tx)).rows.map((r) => r.id))];
}

/** Migration 35: kill switches `agent:<name or external id>` → `agent:<id>` (merged when that switch is engaged too). */
export async function backfillKillSwitches(tx: Tx, bind?: Bind): Promise<void> {
  for (const tenant of await tenants(tx)) {
    await bind?.(tx, tenant);
    const rows = await sql<{ scope: string }>`select scope from gov_kill_switches
      where tenant_id = ${tenant} and scope like 'agent:%' order by scope`.execute(tx);
    for (const { scope } of rows.rows) {
      const ref = scope.slice('agent:'.length);
      if (ACTOR.test(ref)) continue;
      const ids = await idsNamed(tx, tenant, 'agent', ref);
      if (ids.length !== 1 || `agent:${ids[0]}` === scope) continue;
      const target = `agent:${ids[0]}`;
      const engaged = await sql`select 1 as one from gov_kill_switches where tenant_id = ${tenant} and scope = ${target}`.execute(tx);
      if (engaged.rows.length > 0) await sql`delete from gov_kill_switches where tenant_id = ${tenant} and scope = ${scope}`.execute(tx);
      else await sql`update gov_kill_switches set scope = ${target} where tenant_id = ${tenant} and scope = ${scope}`.execute(tx);
    }
  }
}

/** Migration 36: subject holds and open erasure requests of an agent, user or workspace named otherwise than by id → the id. */
export async function backfillHoldSubjects(tx: Tx, bind?: Bind): Promise<void> {
  for (const tenant of await tenants(tx)) {
    await bind?.(tx, tenant);
    const holds = await sql<{ id: string; subject_kind: string; subject_ref: string }>`select cast(id as text) as id, subject_kind,
      subject_ref from cmp_holds where tenant_id = ${tenant} and scope = 'subject'
      and subject_kind in ('agent', 'user', 'workspace')`.execute(tx);
    for (const h of holds.rows) {
      const ids = await idsNamed(tx, tenant, h.subject_kind, h.subject_ref);
      if (ids.length === 1 && ids[0] !== h.subject_ref)
        await sql`update cmp_holds set subject_ref = ${ids[0]} where tenant_id = ${tenant} and id = ${h.id}`.execute(tx);
    }
    const erasures = await sql<{ id: string; subject_kind: string; subject_ref: string }>`select cast(id as text) as id, subject_kind,
      subject_ref from cmp_erasures where tenant_id = ${tenant} and status <> 'completed'
      and subject_kind in ('agent', 'user', 'workspace')`.execute(tx);
    for (const e of erasures.rows) {
      const ids = await idsNamed(tx, tenant, e.subject_kind, e.subject_ref);
      if (ids.length === 1 && ids[0] !== e.subject_ref)
        await sql`update cmp_erasures set subject_ref = ${ids[0]} where tenant_id = ${tenant} and id = ${e.id}`.execute(tx);
    }
  }
}
