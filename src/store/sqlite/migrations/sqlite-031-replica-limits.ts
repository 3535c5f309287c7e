/** Migration 31 (shared rate-limit buckets, replica registry) for sqlite; mirror of the postgres file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';
import { ts } from '../sqlite-checks.js';

/**
 * The same tables as on Postgres, so both backends keep one schema; a SQLite file has one serving
 * process, whose rate limits stay in memory and which has no other replica to compare with, so they stay empty.
 */
export const SQLITE_MIGRATION_031_REPLICA_LIMITS: readonly Migration[] = [
  {
    version: 31,
    name: 'replica_limits',
    async up(tx) {
      for (const s of [
        `create table rate_limit_buckets (
          key text primary key check (length(key) between 1 and 300),
          tokens real not null,
          at_ms integer not null,
          granted integer not null default 0 check (granted >= 0)
        ) strict`,
        `create table serve_replicas (
          id text primary key check (length(id) between 1 and 2000),
          tls_fingerprint text check (tls_fingerprint is null or length(tls_fingerprint) = 95),
          started_at text not null check (${ts('started_at')}),
          seen_at_ms integer not null
        ) strict`,
      ]) {
        await sql.raw(s).execute(tx);
      }
    },
  },
];
