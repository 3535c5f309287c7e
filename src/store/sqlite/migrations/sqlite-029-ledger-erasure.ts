/** Migration 29 (ledger meta erasure) for sqlite; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

/**
 * The one UPDATE `audit_records` admits (src/ledger/erasure.ts): erasure of a record's meta, which
 * destroys the blind and the meta together and stores the commitment in their place (DECISIONS.md
 * "Hash preimage"). Every other column must stay byte-identical, a row erased once cannot change
 * again, and DELETE stays refused. SQLite has no SHA-256 in SQL, so the trigger cannot recompute the
 * commitment; a wrong one is caught by verification (`hash-mismatch` of that record), as any edit
 * of the file would be. The Postgres trigger does recompute it.
 */
export const SQLITE_MIGRATION_029_LEDGER_ERASURE: readonly Migration[] = [
  {
    version: 29,
    name: 'ledger_meta_erasure',
    async up(tx) {
      const same = [
        'pos',
        'id',
        'occurred_at',
        'actor',
        'actor_kind',
        'action',
        'target_kind',
        'target_id',
        'payload_hash',
        'hash',
        'sig',
        'key_id',
      ]
        .map((c) => `new.${c} is old.${c}`)
        .join(' and ');
      const statements = [
        `drop trigger audit_records_no_update`,
        `create trigger audit_records_no_update before update on audit_records
          when not (old.meta_blind is not null and old.meta is not null and new.meta is null and new.meta_blind is null
                    and new.meta_commitment is not null and length(new.meta_commitment) = 32 and ${same})
          begin select raise(abort, 'audit_records is append-only (the one update allowed is meta erasure)'); end`,
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
