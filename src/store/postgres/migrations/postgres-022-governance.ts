/** Migration 22 (governance: approvals, signed policy revisions, kill switches) for postgres; mirror of the sqlite file. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';
import { tenantIsolationDdl } from '../postgres-roles.js';

const ts = (col: string): string => `${col} ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{9}Z$'`;

export const POSTGRES_MIGRATION_022_GOVERNANCE: readonly Migration[] = [
  {
    version: 22,
    name: 'governance',
    async up(tx) {
      const statements = [
        `create table gov_approvals (
          id uuid primary key,
          tenant_id uuid not null references tenants (id),
          action text not null,
          subject text not null,
          params text not null,
          plan_hash text not null check (length(plan_hash) = 64),
          quorum integer not null check (quorum between 1 and 10),
          status text not null check (status in ('pending', 'approved', 'rejected', 'cancelled', 'consumed')),
          reason text not null default '',
          requested_by uuid not null,
          requested_actor text not null,
          expires_at text not null check (${ts('expires_at')}),
          resolved_at text check (resolved_at is null or ${ts('resolved_at')}),
          consumed_at text check (consumed_at is null or ${ts('consumed_at')}),
          created_at text not null check (${ts('created_at')}),
          updated_at text not null check (${ts('updated_at')})
        )`,
        `create index gov_approvals_tenant_idx on gov_approvals (tenant_id, id)`,
        `create table gov_approval_decisions (
          id uuid primary key,
          tenant_id uuid not null references tenants (id),
          approval_id uuid not null references gov_approvals (id),
          user_id uuid not null,
          actor text not null,
          decision text not null check (decision in ('approve', 'reject')),
          reason text not null,
          created_at text not null check (${ts('created_at')})
        )`,
        `create unique index gov_approval_decisions_person_key on gov_approval_decisions (tenant_id, approval_id, user_id)`,
        `create table gov_policy_revisions (
          tenant_id uuid not null references tenants (id),
          surface text not null,
          revision bigint not null check (revision >= 1),
          content text not null,
          note text not null default '',
          sha256 text not null check (length(sha256) = 64),
          key_fingerprint text not null check (length(key_fingerprint) = 64),
          signature text not null,
          created_by text not null,
          created_at text not null check (${ts('created_at')}),
          primary key (tenant_id, surface, revision)
        )`,
        `create table gov_policy_active (
          tenant_id uuid not null references tenants (id),
          surface text not null,
          revision bigint not null check (revision >= 1),
          updated_at text not null check (${ts('updated_at')}),
          primary key (tenant_id, surface),
          foreign key (tenant_id, surface, revision) references gov_policy_revisions (tenant_id, surface, revision)
        )`,
        `create table gov_kill_switches (
          tenant_id uuid not null references tenants (id),
          scope text not null check (length(scope) between 1 and 200),
          reason text not null default '',
          created_by text not null,
          created_at text not null check (${ts('created_at')}),
          primary key (tenant_id, scope)
        )`,
        ...tenantIsolationDdl('gov_approvals'),
        ...tenantIsolationDdl('gov_approval_decisions'),
        ...tenantIsolationDdl('gov_policy_revisions'),
        ...tenantIsolationDdl('gov_policy_active'),
        ...tenantIsolationDdl('gov_kill_switches'),
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
