/** Migration 30 (egress fence) for postgres; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

const ts = (col: string): string => `${col} ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{9}Z$'`;

/**
 * Egress control (see the SQLite file). Both tables are global and the app role may only read them
 * (postgres-roles.ts): mode, allowlist and fence are changed by the operator commands, which connect
 * as the DSN's user (the owner). The trigger function is SECURITY DEFINER, owned by the migrating
 * user, so the app role can neither drop nor bypass it.
 */
export const POSTGRES_MIGRATION_030_EGRESS_FENCE: readonly Migration[] = [
  {
    version: 30,
    name: 'egress_fence',
    async up(tx) {
      const statements = [
        `create table egress_settings (
          id integer primary key check (id = 1),
          mode text not null check (mode in ('compatibility', 'enforced')),
          fence_armed integer not null check (fence_armed in (0, 1)),
          updated_at text not null check (${ts('updated_at')})
        )`,
        `insert into egress_settings (id, mode, fence_armed, updated_at) values (1, 'compatibility', 0, to_char(now() at time zone ` +
          `'utc', 'YYYY-MM-DD"T"HH24:MI:SS".000000000Z"'))`,
        `create table egress_allowlist (
          host text primary key check (length(host) between 1 and 300 and host = lower(host)),
          created_at text not null check (${ts('created_at')})
        )`,
        `create function event_subscriptions_egress_fence() returns trigger language plpgsql security definer set search_path from ` +
          `current as $f$
          declare authority text := split_part(split_part(new.endpoint, '://', 2), '/', 1);
          begin
            if new.enabled = 1
               and coalesce((select fence_armed from egress_settings where id = 1), 0) = 1
               and not exists (select 1 from egress_allowlist a where a.host = authority or left(authority, length(a.host) + 1) = ` +
          `a.host || ':')
            then
              raise exception 'egress fence: endpoint host is not in the egress allowlist' using errcode = 'insufficient_privilege';
            end if;
            return new;
          end $f$`,
        `create trigger event_subscriptions_egress_fence before insert or update on event_subscriptions
          for each row execute function event_subscriptions_egress_fence()`,
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
