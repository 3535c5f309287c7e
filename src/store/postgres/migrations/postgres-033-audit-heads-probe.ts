/** Migration 33 (the heads trigger tests "nothing beyond the head" with one index probe) for postgres; mirror of the sqlite file. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

/**
 * Migration 19's trigger on `audit_heads`, same rules, one test rewritten. "No record lies beyond
 * the new head" was `exists (… seq > new.seq)`: PL/pgSQL caches a generic plan for it, and with
 * the tenant's rows making up most of the table that plan is a sequential scan, which reads the
 * whole chain when nothing lies beyond, as on every append. The last stored seq is now read with
 * `max(seq)`, one backward probe of the primary key whatever the plan.
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
            if coalesce((select max(seq) from audit_records where tenant_id = new.tenant_id), 0) > new.seq then
              raise exception 'audit head of % must name the last record of its chain', new.tenant_id using errcode = 'check_violation';
            end if;
            return new;
          end $f$`,
        )
        .execute(tx);
    },
  },
];
