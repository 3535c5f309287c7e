/**
 * Migration 19 (ledger: heads only move forward, one append at a time) for postgres; mirror of the other backend's file with the same
 * number.
 */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

/**
 * `audit_heads` names each chain's last record, and nothing but an append may move it (issue 30
 * item 8). The app role holds UPDATE on the table because appends move heads; before this, it could
 * also move a head back, and every later append of that chain failed. A trigger, for every role
 * (the owner included), checks each new head row:
 *  - UPDATE: the tenant never changes; the seq only grows; every record between the old and the
 *    new seq exists (the append inserts its records before it moves the head, in the same
 *    transaction); the new seq's record has the new hash; no record lies beyond it.
 *  - INSERT (a chain's first append): records 1..seq exist, the last with that hash, none beyond.
 *  - DELETE and TRUNCATE: never.
 * It runs as the caller, so row-level security confines its reads to the caller's tenant.
 */
export const POSTGRES_MIGRATION_019_AUDIT_HEADS_FORWARD: readonly Migration[] = [
  {
    version: 19,
    name: 'audit_heads_forward',
    async up(tx) {
      for (const s of [
        `create function audit_heads_forward_only() returns trigger language plpgsql as $f$
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
          end $f$`,
        `create trigger audit_heads_forward before insert or update or delete on audit_heads
          for each row execute function audit_heads_forward_only()`,
        `create trigger audit_heads_no_truncate before truncate on audit_heads
          for each statement execute function audit_heads_forward_only()`,
      ]) {
        await sql.raw(s).execute(tx);
      }
    },
  },
];
