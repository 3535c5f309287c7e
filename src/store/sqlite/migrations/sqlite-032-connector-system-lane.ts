/** Migration 32 (the system chain's connector lane) for sqlite; mirror of the postgres file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';
import { uuid, ts } from '../sqlite-checks.js';

/** The system chain's tenant id (src/ledger/record.ts SYSTEM_TENANT); the store layer does not import the ledger. */
const SYSTEM_CHAIN = 'ffffffff-ffff-ffff-ffff-ffffffffffff';
const STATUSES = `('queued', 'delivering', 'delivered', 'failed', 'dead')`;

/** A tenant row must name a tenant, or the system chain (which has no tenants row). */
const guard = (table: string): string[] => {
  const miss = `new.tenant_id <> '${SYSTEM_CHAIN}' and not exists (select 1 from tenants where id = new.tenant_id)`;
  const fail = `begin select raise(abort, 'FOREIGN KEY constraint failed'); end`;
  return [
    `create trigger ${table}_tenant_ins before insert on ${table} when ${miss} ${fail}`,
    `create trigger ${table}_tenant_upd before update of tenant_id on ${table} when ${miss} ${fail}`,
  ];
};

/**
 * A connector that forwards the system chain (logins, tokens, users, connector changes) runs a lane
 * whose cursor and batches carry the system chain's id as `tenant_id`, like the chain's own ledger
 * rows. That id is in no `tenants` row, so the foreign key of `connector_cursors.tenant_id` and
 * `event_deliveries.tenant_id` becomes a trigger that accepts a tenant or the system chain and
 * nothing else. SQLite drops a foreign key only by building the table anew: the rows are copied as
 * they are, with the same indexes.
 */
export const SQLITE_MIGRATION_032_CONNECTOR_SYSTEM_LANE: readonly Migration[] = [
  {
    version: 32,
    name: 'connector_system_lane',
    async up(tx) {
      const deliveries =
        'id, tenant_id, subscription_id, event_id, event_seq, kind, payload, status, attempts, due_at, lease_until, last_status, ' +
        'last_error, created_at, updated_at, delivered_at';
      const cursors = 'id, tenant_id, connector_id, source, cursor_seq, delivered_seq, delivered_at, created_at';
      for (const s of [
        `create table event_deliveries_next (
          id text primary key check (${uuid('id')}),
          tenant_id text not null check (${uuid('tenant_id')}),
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
        `insert into event_deliveries_next (${deliveries}) select ${deliveries} from event_deliveries`,
        `drop table event_deliveries`,
        `alter table event_deliveries_next rename to event_deliveries`,
        `create index event_deliveries_open_idx on event_deliveries (subscription_id, status, event_seq, id)`,
        `create index event_deliveries_tenant_idx on event_deliveries (tenant_id, id)`,
        `create unique index event_deliveries_once on event_deliveries (subscription_id, event_id) where kind = 'event'`,
        ...guard('event_deliveries'),
        `create table connector_cursors_next (
          id text primary key check (${uuid('id')}),
          tenant_id text not null check (${uuid('tenant_id')}),
          connector_id text not null,
          source text not null check (source in ('ledger', 'events')),
          cursor_seq integer not null check (cursor_seq >= 0),
          delivered_seq integer not null check (delivered_seq >= 0),
          delivered_at text check (delivered_at is null or ${ts('delivered_at')}),
          created_at text not null check (${ts('created_at')}),
          unique (connector_id, tenant_id, source)
        ) strict`,
        `insert into connector_cursors_next (${cursors}) select ${cursors} from connector_cursors`,
        `drop table connector_cursors`,
        `alter table connector_cursors_next rename to connector_cursors`,
        ...guard('connector_cursors'),
      ]) {
        await sql.raw(s).execute(tx);
      }
    },
  },
];
