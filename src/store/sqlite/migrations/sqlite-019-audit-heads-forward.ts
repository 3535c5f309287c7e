/**
 * Migration 19 (ledger: heads only move forward, one append at a time) for sqlite; mirror of the other backend's file with the same number.
 */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

/** `pos` of a chain's record: chain << 40 | seq (ledger-store.ts). */
const pos = (chain: string, seq: string): string => `((${chain} << 40) | ${seq})`;

/**
 * `audit_heads` names each chain's last record, and nothing but an append may move it (issue 30
 * item 8): a head moved back made every later append of its chain fail, and a head that names
 * another hash was taken on trust by the next append. Triggers, whoever runs the statement:
 *  - UPDATE: the tenant and chain number never change; the seq only grows; every record between the
 *    old and the new seq exists (the append inserted them first, in the same transaction); the new
 *    seq's record has the new hash; no record lies beyond it.
 *  - INSERT (a chain's first append): records 1..seq exist, the last with that hash, none beyond.
 *  - DELETE: never.
 * The append path inserts a batch's records before it moves the head (ledger-store.ts).
 */
export const SQLITE_MIGRATION_019_AUDIT_HEADS_FORWARD: readonly Migration[] = [
  {
    version: 19,
    name: 'audit_heads_forward',
    async up(tx) {
      const names = (c: string, seq: string, hash: string) =>
        `exists (select 1 from audit_records where pos = ${pos(c, seq)} and hash = ${hash})
         and not exists (select 1 from audit_records where pos > ${pos(c, seq)} and pos < ${pos(`(${c} + 1)`, '0')})`;
      for (const s of [
        `create trigger audit_heads_forward_update before update on audit_heads
          when new.tenant_id is not old.tenant_id or new.chain is not old.chain or new.seq <= old.seq
            or (select count(*) from audit_records where pos > ${pos('old.chain', 'old.seq')} and pos <= ` +
              `${pos('new.chain', 'new.seq')}) <> new.seq - old.seq
            or not (${names('new.chain', 'new.seq', 'new.hash')})
          begin select raise(abort, 'audit_heads: a head only moves forward, to the last record its own append inserted'); end`,
        `create trigger audit_heads_forward_insert before insert on audit_heads
          when (select count(*) from audit_records where pos > ${pos('new.chain', '0')} and pos <= ${pos('new.chain', 'new.seq')}) <> ` +
            `new.seq
            or not (${names('new.chain', 'new.seq', 'new.hash')})
          begin select raise(abort, 'audit_heads: a new head must name the last record of its chain'); end`,
        `create trigger audit_heads_no_delete before delete on audit_heads
          begin select raise(abort, 'audit_heads rows are never deleted'); end`,
      ]) {
        await sql.raw(s).execute(tx);
      }
    },
  },
];
