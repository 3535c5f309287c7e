/** The kit module's one tenant table on both backends; its migration takes the next free number. */
import { sql } from 'kysely';
import type { Migration } from '../../../src/store/migrations.js';
import { latestVersion } from '../../../src/store/migrations.js';
import type { ModuleStorage } from '../../../src/store/module-storage.js';
import { tenantIsolationDdl } from '../../../src/store/postgres/postgres-roles.js';
import { storage } from '../../../src/storage.js';

/** `kit_notes`: a tenant table, confined by `tenant_isolation` on Postgres. */
export interface KitNotesTable {
  id: string;
  tenant_id: string;
  text: string;
  created_at: string;
}

/** The module's own tables: its typed view of a transaction (`ownTables<KitTables>(tx)`). */
export interface KitTables {
  kit_notes: KitNotesTable;
}

// A throwaway module must never collide with the product's list, so it numbers itself after it.
export const KIT_VERSION = latestVersion(storage.sqlite) + 1;

const sqliteUp: Migration = {
  version: KIT_VERSION,
  name: 'kit_notes',
  up: async (tx) => {
    await sql`create table kit_notes (
      id text primary key,
      tenant_id text not null references tenants (id),
      text text not null,
      created_at text not null
    ) strict`.execute(tx);
    await sql`create index kit_notes_tenant_idx on kit_notes (tenant_id, id)`.execute(tx);
  },
};

const postgresUp: Migration = {
  version: KIT_VERSION,
  name: 'kit_notes',
  up: async (tx) => {
    await sql`create table kit_notes (
      id uuid primary key,
      tenant_id uuid not null references tenants (id),
      text text not null,
      created_at text not null
    )`.execute(tx);
    await sql`create index kit_notes_tenant_idx on kit_notes (tenant_id, id)`.execute(tx);
    for (const ddl of tenantIsolationDdl('kit_notes')) await sql.raw(ddl).execute(tx);
  },
};

export const kitStorage: ModuleStorage = {
  name: 'kit',
  tables: [{ name: 'kit_notes', scope: 'tenant', grants: ['select', 'insert'], rls: true }],
  migrations: { sqlite: [sqliteUp], postgres: [postgresUp] },
};
