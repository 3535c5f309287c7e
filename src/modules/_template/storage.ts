/**
 * TEMPLATE (copy to src/modules/<ns>/, rename `tmpl`/`Tmpl`): the module's tables and migrations.
 * Take the next free migration number for both backends (the fold refuses a gap or a duplicate at
 * start), then add this declaration's one line to src/storage.ts.
 */
import { sql } from 'kysely';
import type { Migration } from '../../store/migrations.js';
import type { ModuleStorage } from '../../store/module-storage.js';
import { tenantIsolationDdl } from '../../store/postgres/postgres-roles.js';

/** `tmpl_items`: a tenant table (RLS `tenant_isolation` on Postgres). */
export interface TmplItemsTable {
  id: string;
  tenant_id: string;
  name: string;
  created_at: string;
}

/** The module's own tables: `ownTables<TmplTables>(tx)` types a store transaction over them, no edit of schema.ts. */
export interface TmplTables {
  tmpl_items: TmplItemsTable;
}

// The next free number when you copy this (the template is registered nowhere, so 0 never runs).
const VERSION = 0;

const sqlite: Migration = {
  version: VERSION,
  name: 'tmpl_items',
  up: async (tx) => {
    await sql`create table tmpl_items (
      id text primary key,
      tenant_id text not null references tenants (id),
      name text not null,
      created_at text not null
    ) strict`.execute(tx);
    await sql`create index tmpl_items_tenant_idx on tmpl_items (tenant_id, id)`.execute(tx);
  },
};

const postgres: Migration = {
  version: VERSION,
  name: 'tmpl_items',
  up: async (tx) => {
    await sql`create table tmpl_items (
      id uuid primary key,
      tenant_id uuid not null references tenants (id),
      name text not null,
      created_at text not null
    )`.execute(tx);
    await sql`create index tmpl_items_tenant_idx on tmpl_items (tenant_id, id)`.execute(tx);
    // Every tenant table: the start-up check refuses one without FORCE RLS and the policy.
    for (const ddl of tenantIsolationDdl('tmpl_items')) await sql.raw(ddl).execute(tx);
  },
};

export const tmplStorage: ModuleStorage = {
  name: 'tmpl',
  // Grants: only what the service does (no DELETE on a record that is never deleted).
  tables: [{ name: 'tmpl_items', scope: 'tenant', grants: ['select', 'insert'], rls: true }],
  migrations: { sqlite: [sqlite], postgres: [postgres] },
};
