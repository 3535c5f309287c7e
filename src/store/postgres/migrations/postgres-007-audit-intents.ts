/** Migration 7 (audit intents) for postgres; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

const ts = (col: string): string => `${col} ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{9}Z$'`;

/**
 * `audit_intents` (see the SQLite file): markers of committed changes awaiting their audit record.
 * Global (no RLS): a marker is written from tenant-bound and unbound transactions alike, and the
 * recovery of a crashed replica's markers reads them all.
 */
export const POSTGRES_MIGRATION_007_AUDIT_INTENTS: readonly Migration[] = [
  {
    version: 7,
    name: 'audit_intents',
    async up(tx) {
      const statements = [
        `create table audit_intents (
          id uuid primary key,
          scope uuid not null,
          chain uuid not null,
          actor text not null,
          actor_kind text not null,
          route text not null,
          request_id text not null,
          created_at text not null check (${ts('created_at')})
        )`,
        `create index audit_intents_scope_idx on audit_intents (scope)`,
        `create index audit_intents_created_idx on audit_intents (created_at)`,
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
