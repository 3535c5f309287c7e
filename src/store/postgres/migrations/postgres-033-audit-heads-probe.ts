/** Migration 33 (the heads trigger is planned at every call, so its tests stay index probes) for postgres; mirror of the sqlite file. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

/**
 * Migration 19's trigger on `audit_heads`, same rules, planned at every call. PL/pgSQL caches a
 * generic plan for each statement of a function, made once per connection, often while the chain
 * is short; as the chain grows that plan stays a scan of the tenant's records ("nothing beyond the
 * new head" as a sequential scan), so each append cost time in proportion to the chain. Planned with
 * the actual head seq, every test is one index range probe whatever the table's size or statistics.
 */
export const POSTGRES_MIGRATION_033_AUDIT_HEADS_PROBE: readonly Migration[] = [
  {
    version: 33,
    name: 'audit_heads_probe',
    async up(tx) {
      await sql
        .raw(
          `create or replace function audit_heads_forward_only() returns trigger language plpgsql as $f$
          declare
            n bigint;
          begin
            if tg_op = 'DELETE' or tg_op = 'TRUNCATE' then
              raise exception 'audit_heads rows are never deleted' using errcode = 'insufficient_privilege';
            end if;
            if tg_op = 'UPDATE' then
              if new.tenant_id <> old.tenant_id or new.seq <= old.seq then
                raise exception 'audit head of % only moves forward (seq % to %)', old.tenant_id, old.seq, new.seq using errcode = ` +
            `'check_violation';
              end if;
              select count(*) into n from audit_records where tenant_id = new.tenant_id and seq > old.seq and seq <= new.seq;
              if n <> new.seq - old.seq then
                raise exception 'audit head of % may only move over records appended before it (seq % to %)', new.tenant_id, old.seq, ` +
            `new.seq using errcode = 'check_violation';
              end if;
            else
              select count(*) into n from audit_records where tenant_id = new.tenant_id and seq <= new.seq;
              if n <> new.seq then
                raise exception 'a new audit head of % must follow records 1..%', new.tenant_id, new.seq using errcode = 'check_violation';
              end if;
            end if;
            if not exists (select 1 from audit_records where tenant_id = new.tenant_id and seq = new.seq and hash = new.hash) then
              raise exception 'audit head of % must name the hash of its record at seq %', new.tenant_id, new.seq using errcode = ` +
            `'check_violation';
            end if;
            if exists (select 1 from audit_records where tenant_id = new.tenant_id and seq > new.seq) then
              raise exception 'audit head of % must name the last record of its chain', new.tenant_id using errcode = 'check_violation';
            end if;
            return new;
          end $f$ set plan_cache_mode = force_custom_plan`,
        )
        .execute(tx);
    },
  },
];
