/** Migration 22 (governance: approvals, signed policy revisions, kill switches) for sqlite; mirror of the postgres file. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';
import { uuid, ts } from '../sqlite-checks.js';

export const SQLITE_MIGRATION_022_GOVERNANCE: readonly Migration[] = [
  {
    version: 22,
    name: 'governance',
    async up(tx) {
      const statements = [
        `create table gov_approvals (
          id text primary key check (${uuid('id')}),
          tenant_id text not null references tenants (id) check (${uuid('tenant_id')}),
          action text not null,
          subject text not null,
          params text not null,
          plan_hash text not null check (length(plan_hash) = 64),
          quorum integer not null check (quorum between 1 and 10),
          status text not null check (status in ('pending', 'approved', 'rejected', 'cancelled', 'consumed')),
          reason text not null default '',
          requested_by text not null check (${uuid('requested_by')}),
          requested_actor text not null,
          expires_at text not null check (${ts('expires_at')}),
          resolved_at text check (resolved_at is null or ${ts('resolved_at')}),
          consumed_at text check (consumed_at is null or ${ts('consumed_at')}),
          created_at text not null check (${ts('created_at')}),
          updated_at text not null check (${ts('updated_at')})
        ) strict`,
        `create index gov_approvals_tenant_idx on gov_approvals (tenant_id, id)`,
        `create table gov_approval_decisions (
          id text primary key check (${uuid('id')}),
          tenant_id text not null references tenants (id) check (${uuid('tenant_id')}),
          approval_id text not null references gov_approvals (id),
          user_id text not null check (${uuid('user_id')}),
          actor text not null,
          decision text not null check (decision in ('approve', 'reject')),
          reason text not null,
          created_at text not null check (${ts('created_at')})
        ) strict`,
        // One decision per person: a second credential of the same user is refused here too.
        `create unique index gov_approval_decisions_person_key on gov_approval_decisions (tenant_id, approval_id, user_id)`,
        `create table gov_policy_revisions (
          tenant_id text not null references tenants (id) check (${uuid('tenant_id')}),
          surface text not null,
          revision integer not null check (revision >= 1),
          content text not null,
          note text not null default '',
          sha256 text not null check (length(sha256) = 64),
          key_fingerprint text not null check (length(key_fingerprint) = 64),
          signature text not null,
          created_by text not null,
          created_at text not null check (${ts('created_at')}),
          primary key (tenant_id, surface, revision)
        ) strict, without rowid`,
        `create table gov_policy_active (
          tenant_id text not null references tenants (id) check (${uuid('tenant_id')}),
          surface text not null,
          revision integer not null check (revision >= 1),
          updated_at text not null check (${ts('updated_at')}),
          primary key (tenant_id, surface),
          foreign key (tenant_id, surface, revision) references gov_policy_revisions (tenant_id, surface, revision)
        ) strict, without rowid`,
        `create table gov_kill_switches (
          tenant_id text not null references tenants (id) check (${uuid('tenant_id')}),
          scope text not null check (length(scope) between 1 and 200),
          reason text not null default '',
          created_by text not null,
          created_at text not null check (${ts('created_at')}),
          primary key (tenant_id, scope)
        ) strict, without rowid`,
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
