/** Migration 1 (tenants and agents) for sqlite; mirror of the postgres file with the same number. */
import { sql, type Transaction } from 'kysely';
import type { Migration } from '../../migrations.js';
import type { MigrationDatabase } from '../../schema.js';
import { uuid, ts } from '../sqlite-checks.js';

async function exec(tx: Transaction<MigrationDatabase>, statements: readonly string[]): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(tx);
}

export const SQLITE_MIGRATION_001_TENANTS_AGENTS: readonly Migration[] = [
  {
    version: 1,
    name: 'tenants_and_agents',
    up: (tx) =>
      exec(tx, [
        // STRICT (SQLite ≥ 3.37) rejects values of the wrong storage class instead of coercing them.
        `create table tenants (
          id text primary key check (${uuid('id')}),
          name text not null,
          region text not null,
          status text not null check (status in ('active', 'suspended')),
          created_at text not null check (${ts('created_at')}),
          deleted_at text check (deleted_at is null or ${ts('deleted_at')})
        ) strict`,
        `create table agents (
          id text primary key check (${uuid('id')}),
          tenant_id text not null references tenants (id) check (${uuid('tenant_id')}),
          name text not null,
          kind text not null,
          external_id text not null default '',
          status text not null,
          version integer not null default 1 check (version >= 1),
          created_at text not null check (${ts('created_at')}),
          updated_at text not null check (${ts('updated_at')})
        ) strict`,
        `create unique index agents_tenant_external_id_key on agents (tenant_id, external_id) where external_id <> ''`,
        `create index agents_tenant_id_idx on agents (tenant_id, id)`,
      ]),
  },
];
