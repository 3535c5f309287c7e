/** Migration 7 (audit intents) for sqlite; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';
import { uuid, ts } from '../sqlite-checks.js';

/**
 * `audit_intents`: one marker per transaction a mutating request commits, written in that
 * transaction and deleted in the transaction that commits the request's audit record
 * (src/ledger/audit-intent.ts). A marker that outlives its request is a change without its
 * record; it becomes an `audit.recovered_after_failure` record. Global: markers of every tenant.
 */
export const SQLITE_MIGRATION_007_AUDIT_INTENTS: readonly Migration[] = [
  {
    version: 7,
    name: 'audit_intents',
    async up(tx) {
      const statements = [
        `create table audit_intents (
          id text primary key check (${uuid('id')}),
          scope text not null check (${uuid('scope')}),
          chain text not null check (${uuid('chain')}),
          actor text not null,
          actor_kind text not null,
          route text not null,
          request_id text not null,
          created_at text not null check (${ts('created_at')})
        ) strict`,
        `create index audit_intents_scope_idx on audit_intents (scope)`,
        `create index audit_intents_created_idx on audit_intents (created_at)`,
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
