/** Migration 23 (eventing) for sqlite; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';
import { uuid, ts } from '../sqlite-checks.js';

const STATUSES = `('queued', 'delivering', 'delivered', 'failed', 'dead')`;

/**
 * The durable event log (`events`, numbered per tenant by `event_seqs`), webhook subscriptions and
 * their deliveries (src/events, src/modules/eventing; docs/eventing.md).
 */
export const SQLITE_MIGRATION_023_EVENTING: readonly Migration[] = [
  {
    version: 23,
    name: 'eventing',
    async up(tx) {
      const statements = [
        `create table event_seqs (
          tenant_id text primary key references tenants (id) check (${uuid('tenant_id')}),
          last_seq integer not null check (last_seq >= 0)
        ) strict`,
        `create table events (
          tenant_id text not null references tenants (id) check (${uuid('tenant_id')}),
          seq integer not null check (seq >= 1),
          id text not null unique check (${uuid('id')}),
          type text not null,
          source text not null,
          subject text not null,
          time text not null check (${ts('time')}),
          data text not null,
          traceparent text,
          created_at text not null check (${ts('created_at')}),
          primary key (tenant_id, seq)
        ) strict, without rowid`,
        `create index events_created_idx on events (tenant_id, created_at)`,
        `create table event_subscriptions (
          id text primary key check (${uuid('id')}),
          tenant_id text not null references tenants (id) check (${uuid('tenant_id')}),
          name text not null,
          enabled integer not null check (enabled in (0, 1)),
          event_types text not null,
          endpoint text not null,
          ca_pem text,
          pin_sha256 text,
          sink_format text not null,
          auth_kind text check (auth_kind is null or auth_kind in ('bearer', 'basic', 'header')),
          auth_header text,
          auth_sealed text,
          auth_hint text,
          secret_sealed text not null,
          previous_secret_sealed text,
          previous_expires_at text check (previous_expires_at is null or ${ts('previous_expires_at')}),
          max_attempts integer not null check (max_attempts between 1 and 50),
          initial_interval_s integer not null check (initial_interval_s between 1 and 86400),
          timeout_ms integer not null check (timeout_ms between 100 and 120000),
          role text not null check (role in ('viewer', 'editor', 'admin', 'owner')),
          created_by text not null,
          cursor_seq integer not null check (cursor_seq >= 0),
          version integer not null check (version >= 1),
          created_at text not null check (${ts('created_at')}),
          updated_at text not null check (${ts('updated_at')})
        ) strict`,
        `create unique index event_subscriptions_name_key on event_subscriptions (tenant_id, name)`,
        `create table event_deliveries (
          id text primary key check (${uuid('id')}),
          tenant_id text not null references tenants (id) check (${uuid('tenant_id')}),
          subscription_id text not null check (${uuid('subscription_id')}),
          event_id text not null check (${uuid('event_id')}),
          event_seq integer not null check (event_seq >= 0),
          kind text not null check (kind in ('event', 'test', 'replay')),
          payload text,
          status text not null check (status in ${STATUSES}),
          attempts integer not null check (attempts >= 0),
          due_at integer not null,
          lease_until integer,
          last_status integer,
          last_error text,
          created_at text not null check (${ts('created_at')}),
          updated_at text not null check (${ts('updated_at')}),
          delivered_at text check (delivered_at is null or ${ts('delivered_at')})
        ) strict`,
        // The lane of one subscription walks its open deliveries in sequence order.
        `create index event_deliveries_open_idx on event_deliveries (subscription_id, status, event_seq, id)`,
        `create index event_deliveries_tenant_idx on event_deliveries (tenant_id, id)`,
        // An event becomes at most one first delivery per lane, whatever replicas dispatch it.
        `create unique index event_deliveries_once on event_deliveries (subscription_id, event_id) where kind = 'event'`,
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
