import { sql, type Transaction } from 'kysely';
import type { MigrationDatabase } from '../schema.js';
import { StoreError } from '../store-error.js';

/** Role the service switches to in every transaction unless `SERVICE_PG_APP_ROLE` names another. */
export const DEFAULT_APP_ROLE = 'svc_app';

/** Name of the RLS policy every tenant table carries. */
export const TENANT_POLICY = 'tenant_isolation';

// A plain lowercase identifier: the name is spliced into DDL (DO blocks take no parameters),
// so anything that would need quoting is refused rather than escaped.
const ROLE_RE = /^[a-z_][a-z0-9_]{0,62}$/;

/** The app role from config, then `SERVICE_PG_APP_ROLE`, then `svc_app`; refuses names that need quoting. */
export function resolveAppRole(configured: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const role = configured ?? env['SERVICE_PG_APP_ROLE'] ?? DEFAULT_APP_ROLE;
  if (!ROLE_RE.test(role)) {
    throw new StoreError('invalid_config', `postgres app role ${JSON.stringify(role)} must match ${ROLE_RE.source}`);
  }
  return role;
}

/** `enable` + `force` row-level security and the `tenant_isolation` policy, for a tenant table's migration. */
export function tenantIsolationDdl(table: string): string[] {
  const expr = `tenant_id = current_setting('app.tenant_id')::uuid`;
  return [
    `alter table ${table} enable row level security`,
    // FORCE: the owner is confined too, so a migration-owned table is never readable unfiltered.
    `alter table ${table} force row level security`,
    `create policy ${TENANT_POLICY} on ${table} using (${expr}) with check (${expr})`,
  ];
}

/** Creates the NOLOGIN app role if missing (race-safe across databases of one cluster) and makes the session user a member. */
export async function ensureAppRole(tx: Transaction<MigrationDatabase>, role: string): Promise<void> {
  // Roles are cluster-wide and advisory locks are per database, so two migrators of two databases
  // can race here: the loser sees duplicate_object, or unique_violation on pg_authid's index.
  await sql
    .raw(
      `do $svc$ begin
         if not exists (select from pg_catalog.pg_roles where rolname = '${role}') then
           begin
             create role "${role}" nologin nosuperuser nobypassrls noinherit;
           exception when duplicate_object or unique_violation then null;
           end;
         end if;
       end $svc$`,
    )
    .execute(tx);
  const me = await sql<{ super: boolean; member: boolean; user: string }>`
    select r.rolsuper as super, pg_has_role(current_user, ${role}, 'MEMBER') as member, current_user as user
    from pg_catalog.pg_roles r where r.rolname = current_user`.execute(tx);
  const row = me.rows[0];
  if (!row || row.super || row.member) return;
  try {
    await sql.raw(`grant "${role}" to current_user`).execute(tx);
  } catch (err) {
    throw new StoreError(
      'isolation_broken',
      `user ${row.user} cannot switch to role ${role}: run "GRANT ${role} TO ${row.user}" as an administrator (docs/storage.md): ` +
        `${(err as Error).message}`,
    );
  }
}

/**
 * Grants the app role exactly `grants` (table → privileges, folded from the areas' table declarations:
 * postgres-migrations.ts) and `sequences`; idempotent, so it also repairs a renamed role.
 */
export async function grantAppRole(
  tx: Transaction<MigrationDatabase>,
  role: string,
  grants: Readonly<Record<string, readonly string[]>>,
  sequences: readonly string[],
): Promise<void> {
  for (const [table, privileges] of Object.entries(grants)) {
    await sql.raw(`grant ${privileges.join(', ')} on table ${table} to "${role}"`).execute(tx);
  }
  for (const seq of sequences) await sql.raw(`grant usage on sequence ${seq} to "${role}"`).execute(tx);
}

/** Refuses to run unless every table with a tenant_id column is forced under `tenant_isolation` and the app role cannot bypass it. */
export async function verifyIsolation(tx: Transaction<MigrationDatabase>, role: string): Promise<void> {
  const problems: string[] = [];
  const roleRow = await sql<{ rolsuper: boolean; rolbypassrls: boolean }>`
    select rolsuper, rolbypassrls from pg_catalog.pg_roles where rolname = ${role}`.execute(tx);
  const r = roleRow.rows[0];
  if (!r) problems.push(`role ${role} does not exist`);
  else if (r.rolsuper || r.rolbypassrls) problems.push(`role ${role} is SUPERUSER or BYPASSRLS`);
  // Discovered from the catalog, not from TENANT_TABLES, so a table added without RLS is caught.
  const tables = await sql<{ name: string; rls: boolean; forced: boolean; owner: string; policy: boolean }>`
    select c.relname as name, c.relrowsecurity as rls, c.relforcerowsecurity as forced,
           pg_catalog.pg_get_userbyid(c.relowner) as owner,
           exists (select 1 from pg_catalog.pg_policy p where p.polrelid = c.oid and p.polname = ${TENANT_POLICY}) as policy
    from pg_catalog.pg_class c
    join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    where n.nspname = current_schema() and c.relkind in ('r', 'p')
      and exists (select 1 from pg_catalog.pg_attribute a
                  where a.attrelid = c.oid and a.attname = 'tenant_id' and not a.attisdropped)
    order by c.relname`.execute(tx);
  for (const t of tables.rows) {
    if (!t.rls || !t.forced) problems.push(`table ${t.name} lacks ENABLE/FORCE ROW LEVEL SECURITY`);
    if (!t.policy) problems.push(`table ${t.name} lacks the ${TENANT_POLICY} policy`);
    if (t.owner === role) problems.push(`table ${t.name} is owned by the app role ${role}`);
  }
  if (problems.length > 0) {
    throw new StoreError('isolation_broken', `postgres tenant isolation is not in place: ${problems.join('; ')}`);
  }
}
