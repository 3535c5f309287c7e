/** Migration 32 (the system chain's connector lane) for postgres; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

/** The system chain's tenant id (src/ledger/record.ts SYSTEM_TENANT); the store layer does not import the ledger. */
const SYSTEM_CHAIN = 'ffffffff-ffff-ffff-ffff-ffffffffffff';

/**
 * A connector that forwards the system chain (logins, tokens, users, connector changes) runs a lane
 * whose cursor and batches carry the system chain's id as `tenant_id`, like the chain's own rows in
 * `audit_records`, and are reached under the app role with `app.tenant_id` set to that id: row-level
 * security stays exactly as it is (a transaction bound to a tenant still sees that tenant's rows
 * only, and one bound to the system chain only the system chain's). That id is in no `tenants` row,
 * so the foreign key of `connector_cursors.tenant_id` and `event_deliveries.tenant_id` becomes a
 * trigger that accepts a tenant or the system chain and nothing else.
 */
export const POSTGRES_MIGRATION_032_CONNECTOR_SYSTEM_LANE: readonly Migration[] = [
  {
    version: 32,
    name: 'connector_system_lane',
    async up(tx) {
      const statements = [
        `do $svc$ declare r record; begin
           for r in select c.conname, t.relname from pg_catalog.pg_constraint c
               join pg_catalog.pg_class t on t.oid = c.conrelid
               join pg_catalog.pg_namespace n on n.oid = t.relnamespace
             where c.contype = 'f' and n.nspname = current_schema() and c.confrelid = 'tenants'::regclass
               and t.relname in ('connector_cursors', 'event_deliveries')
           loop
             execute format('alter table %I drop constraint %I', r.relname, r.conname);
           end loop;
         end $svc$`,
        `create function tenant_or_system_chain() returns trigger language plpgsql as $f$
           begin
             if new.tenant_id <> '${SYSTEM_CHAIN}'::uuid and not exists (select 1 from tenants where id = new.tenant_id) then
               raise exception 'insert or update on table % violates foreign key: tenant % is not present in table "tenants"',
                 tg_table_name, new.tenant_id
                 using errcode = 'foreign_key_violation';
             end if;
             return new;
           end $f$`,
        `create trigger connector_cursors_tenant before insert or update of tenant_id on connector_cursors
           for each row execute function tenant_or_system_chain()`,
        `create trigger event_deliveries_tenant before insert or update of tenant_id on event_deliveries
           for each row execute function tenant_or_system_chain()`,
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
