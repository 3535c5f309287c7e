/** Migration 30 (egress fence) for sqlite; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';
import { ts } from '../sqlite-checks.js';

/** host[:port] of a stored endpoint (`https://host:port/path`, as URL.toString() writes it). */
const AUTHORITY =
  `substr(substr(new.endpoint, instr(new.endpoint, '://') + 3), 1, instr(substr(new.endpoint, instr(new.endpoint, '://') + 3), '/') - ` +
  `1)`;

/** The fence's refusal: armed, the row enabled, and its endpoint host (or host:port) not allowlisted. */
const REFUSE = `new.enabled = 1
  and coalesce((select fence_armed from egress_settings where id = 1), 0) = 1
  and not exists (select 1 from egress_allowlist a where a.host = ${AUTHORITY} or substr(${AUTHORITY}, 1, length(a.host) + 1) = a.host ` +
    `|| ':')`;

/**
 * Egress control (docs/eventing.md "Egress control"): the mode (`compatibility` | `enforced`) the
 * app reads, the allowlist of destination hosts, and the database fence: when armed, triggers refuse
 * any insert or update of an enabled subscription whose endpoint host is not allowlisted.
 */
export const SQLITE_MIGRATION_030_EGRESS_FENCE: readonly Migration[] = [
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
        ) strict`,
        `insert into egress_settings (id, mode, fence_armed, updated_at) values (1, 'compatibility', 0, ` +
          `strftime('%Y-%m-%dT%H:%M:%S.000000000Z', 'now'))`,
        `create table egress_allowlist (
          host text primary key check (length(host) between 1 and 300 and host = lower(host)),
          created_at text not null check (${ts('created_at')})
        ) strict`,
        `create trigger event_subscriptions_egress_fence_insert before insert on event_subscriptions
          when ${REFUSE}
          begin select raise(abort, 'egress fence: endpoint host is not in the egress allowlist'); end`,
        `create trigger event_subscriptions_egress_fence_update before update on event_subscriptions
          when ${REFUSE}
          begin select raise(abort, 'egress fence: endpoint host is not in the egress allowlist'); end`,
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
