/** Migration 31 (shared rate-limit buckets, replica registry) for postgres; mirror of the sqlite file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

const ts = (col: string): string => `${col} ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{9}Z$'`;

/**
 * More state replicas share (docs/scale-out.md): the deployment's token bucket per principal, from
 * which each replica reserves tokens in chunks (auth/rate-limit-shared.ts), and the live replicas
 * with the TLS certificate each serves (serve/replica-registry.ts). Global tables, no row-level security.
 */
export const POSTGRES_MIGRATION_031_REPLICA_LIMITS: readonly Migration[] = [
  {
    version: 31,
    name: 'replica_limits',
    async up(tx) {
      for (const s of [
        `create table rate_limit_buckets (
          key text primary key check (length(key) between 1 and 300),
          tokens double precision not null,
          at_ms bigint not null,
          granted integer not null default 0 check (granted >= 0)
        )`,
        `create table serve_replicas (
          id text primary key check (length(id) between 1 and 2000),
          tls_fingerprint text check (tls_fingerprint is null or tls_fingerprint ~ '^([0-9A-F]{2}:){31}[0-9A-F]{2}$'),
          started_at text not null check (${ts('started_at')}),
          seen_at_ms bigint not null
        )`,
      ]) {
        await sql.raw(s).execute(tx);
      }
    },
  },
];
