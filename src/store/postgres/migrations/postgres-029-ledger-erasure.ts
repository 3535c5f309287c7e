/** Migration 29 (ledger meta erasure) for postgres; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

/** lp("svc.audit.meta.v1") ‖ u32be(32), as src/ledger/preimage.ts META_PREFIX (frozen here: a migration never changes). */
const META_PREFIX_HEX = '000000117376632e61756469742e6d6574612e763100000020';

/**
 * Erasure of ledger meta (src/ledger/erasure.ts): the one UPDATE `audit_records` admits. The app role
 * still has no UPDATE grant; it calls `svc_audit_erase_meta(seqs)`, a SECURITY DEFINER function
 * owned by the migrating user (the table owner), which erases the meta of those seqs of the tenant
 * bound in `app.tenant_id` (FORCE row-level security confines the owner too). The trigger admits an
 * UPDATE only in the erasure's shape: meta and blind set to null together, the commitment stored
 * equal to SHA-256(prefix ‖ old blind ‖ old meta) recomputed here, every other column unchanged, and
 * never twice. DELETE and TRUNCATE stay refused for everyone.
 */
export const POSTGRES_MIGRATION_029_LEDGER_ERASURE: readonly Migration[] = [
  {
    version: 29,
    name: 'ledger_meta_erasure',
    async up(tx) {
      const statements = [
        `create or replace function audit_records_append_only() returns trigger language plpgsql as $f$
          begin
            if tg_op = 'UPDATE' and old.meta_blind is not null and old.meta is not null
               and new.meta is null and new.meta_blind is null
               and new.meta_commitment is not distinct from sha256('\\x${META_PREFIX_HEX}'::bytea || old.meta_blind || ` +
                 `convert_to(old.meta, 'UTF8'))
               and (new.tenant_id, new.seq, new.id, new.occurred_at, new.actor, new.actor_kind, new.action, new.target_kind, ` +
                 `new.target_id, new.payload_hash, new.hash, new.sig, new.key_id)
                   is not distinct from
                   (old.tenant_id, old.seq, old.id, old.occurred_at, old.actor, old.actor_kind, old.action, old.target_kind, ` +
                     `old.target_id, old.payload_hash, old.hash, old.sig, old.key_id)
            then
              return new;
            end if;
            raise exception 'audit_records is append-only (the one update allowed is meta erasure)' using errcode = ` +
              `'insufficient_privilege';
          end $f$`,
        `create function svc_audit_erase_meta(seqs bigint[]) returns bigint language plpgsql security definer set search_path from ` +
          `current as $f$
          declare n bigint;
          begin
            update audit_records
               set meta = null, meta_blind = null,
                   meta_commitment = sha256('\\x${META_PREFIX_HEX}'::bytea || meta_blind || convert_to(meta, 'UTF8'))
             where tenant_id = current_setting('app.tenant_id')::uuid and seq = any(seqs) and meta_blind is not null;
            get diagnostics n = row_count;
            return n;
          end $f$`,
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
