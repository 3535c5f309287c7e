/** Migration 1 (tenants and agents) for postgres; mirror of the sqlite file with the same number. */
import { sql, type Transaction } from 'kysely';
import type { Migration } from '../../migrations.js';
import type { MigrationDatabase } from '../../schema.js';
import { tenantIsolationDdl } from '../postgres-roles.js';

// 9-digit RFC 3339 UTC text (DECISIONS.md); kept as text because it is what the ledger hashes,
// and in this fixed-width form text order equals time order.
const ts = (col: string): string => `${col} ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{9}Z$'`;

async function exec(tx: Transaction<MigrationDatabase>, statements: readonly string[]): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(tx);
}

export const POSTGRES_MIGRATION_001_TENANTS_AGENTS: readonly Migration[] = [
  {
    version: 1,
    name: 'tenants_and_agents',
    up: (tx) =>
      exec(tx, [
        `create table tenants (
          id uuid primary key,
          name text not null,
          region text not null,
          status text not null check (status in ('active', 'suspended')),
          created_at text not null check (${ts('created_at')}),
          deleted_at text check (deleted_at is null or ${ts('deleted_at')})
        )`,
        `create table agents (
          id uuid primary key,
          tenant_id uuid not null references tenants (id),
          name text not null,
          kind text not null,
          external_id text not null default '',
          status text not null,
          version integer not null default 1 check (version >= 1),
          created_at text not null check (${ts('created_at')}),
          updated_at text not null check (${ts('updated_at')})
        )`,
        `create unique index agents_tenant_external_id_key on agents (tenant_id, external_id) where external_id <> ''`,
        `create index agents_tenant_id_idx on agents (tenant_id, id)`,
        ...tenantIsolationDdl('agents'),
      ]),
  },
];
