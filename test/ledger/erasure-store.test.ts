/**
 * Erasure of ledger meta in the store (src/ledger/erasure.ts, migration 29), on both stores: the
 * matched records lose meta and blind and keep their commitment, the chain (hashes, checkpoints,
 * signatures) still verifies, a second run erases nothing more, and verification still catches
 * tampering: another commitment, or meta put back into an erased row. The append-only trigger
 * admits only the erasure's shape (Postgres also recomputes the commitment; the app role cannot
 * UPDATE at all).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sealBatch, type ChainTail } from '../../src/ledger/chain.js';
import { verifyStoredChain } from '../../src/ledger/chain-verifier.js';
import { checkpointDraft } from '../../src/ledger/checkpoint.js';
import { eraseLedgerMeta } from '../../src/ledger/erasure.js';
import { insertRecords, readRecords } from '../../src/ledger/ledger-store.js';
import type { AuditDraft, AuditRecord } from '../../src/ledger/record.js';
import { testStores, type TestStore } from '../helpers/stores.js';
import { newSigner, TENANT, trust } from './fixtures.js';

const N = 2600;
const EMAIL = 'bob.erasure@example.test';

for (const b of await testStores()) {
  describe(`${b.backend}: ledger meta erasure in the store`, { skip: b.skip }, () => {
    let ts: TestStore;
    const signer = newSigner();
    const sealed: AuditRecord[] = [];
    const subjectSeqs: number[] = [];

    before(async () => {
      ts = await b.create();
      await ts.store.migrate();
      let tail: ChainTail | null = null;
      for (let seq = 1; seq <= N; seq += 500) {
        const drafts: AuditDraft[] = [];
        for (let s = seq; s < Math.min(N + 1, seq + 500); s++) {
          if (s % 1000 === 0) drafts.push(checkpointDraft());
          else if (s % 50 === 3) {
            subjectSeqs.push(s);
            drafts.push({
              actor: 'user:u1',
              actor_kind: 'user',
              action: 'ticket.update',
              target_kind: 'ticket',
              target_id: `t-${s}`,
              meta: { requester: EMAIL, s },
            });
          } else
            drafts.push({
              actor: 'user:u1',
              actor_kind: 'user',
              action: 'agent.update',
              target_kind: 'agent',
              target_id: s === 10 ? 'subject-target' : `a-${s}`,
              meta: { s },
            });
        }
        const recs = sealBatch(tail, TENANT, drafts, signer);
        const prev: ChainTail | null = tail;
        await ts.store.withTenant(TENANT, (tx) => insertRecords(tx, TENANT, recs, prev));
        sealed.push(...recs);
        const last = recs[recs.length - 1] as AuditRecord;
        tail = { seq: last.seq, hash: last.hash };
      }
      subjectSeqs.push(10);
    });
    after(async () => {
      await ts?.dispose();
    });

    const verify = () => verifyStoredChain(ts.store, TENANT, { keys: trust(signer), pool: null });
    const read = (seq: number) => ts.store.withTenant(TENANT, async (tx) => (await readRecords(tx, TENANT, seq, 1))[0] as AuditRecord);

    it('erases meta and blind of exactly the matched records, keeps the commitment, and the chain verifies', async () => {
      const r = await eraseLedgerMeta(ts.store, TENANT, { actors: [], targets: ['subject-target'], strings: [EMAIL] });
      assert.equal(r.erased, subjectSeqs.length);
      assert.equal(r.scanned, N);
      for (const seq of [3, 53, 10]) {
        const rec = await read(seq);
        assert.equal(rec.meta, null);
        assert.equal(rec.meta_blind, null);
        assert.equal(rec.meta_commitment, sealed[seq - 1]!.meta_commitment, 'the commitment stays');
        assert.equal(rec.hash, sealed[seq - 1]!.hash);
      }
      const untouched = await read(4);
      assert.equal(untouched.meta, sealed[3]!.meta);
      assert.equal(untouched.meta_blind, sealed[3]!.meta_blind);
      const report = await verify();
      assert.equal(report.ok, true, JSON.stringify(report));
      assert.equal(report.checkpoints.count, 2);
      assert.equal(report.signatures.checked, N);
      assert.equal((await eraseLedgerMeta(ts.store, TENANT, { actors: [], targets: [], strings: [EMAIL] })).erased, 0, 'idempotent');
    });

    it('refuses a needle too short to name a subject', async () => {
      await assert.rejects(eraseLedgerMeta(ts.store, TENANT, { actors: [], targets: [], strings: ['"s"'] }), RangeError);
    });

    it('the trigger admits only the erasure shape', async () => {
      const admin = ts.admin;
      if (b.backend === 'sqlite') {
        await assert.rejects(admin.query(`update audit_records set actor = 'x' where (pos & 1099511627775) = 5`), /append-only/);
        await assert.rejects(admin.query(`update audit_records set meta = '{}' where (pos & 1099511627775) = 5`), /append-only/);
        await assert.rejects(admin.query(`delete from audit_records where (pos & 1099511627775) = 5`), /append-only/);
      } else {
        await assert.rejects(admin.query(`update audit_records set actor = 'x' where seq = 5`), /append-only/);
        // The erasure shape with a commitment that is not the record's: refused even for the owner.
        await assert.rejects(
          admin.query(
            `update audit_records set meta = null, meta_blind = null, meta_commitment = '\\x${'00'.repeat(32)}'::bytea where seq = 5`,
          ),
          /append-only/,
        );
        await assert.rejects(admin.query(`delete from audit_records where seq = 5`), /append-only/);
        // The app role has no UPDATE: only the definer function erases.
        await assert.rejects(
          ts.store.withTenant(TENANT, (tx) => tx.updateTable('audit_records').set({ meta: null }).where('seq', '=', 5).execute()),
          /permission denied/,
        );
      }
      assert.equal((await verify()).ok, true);
    });

    it('verification catches another commitment, and meta put back into an erased row', async () => {
      const where = b.backend === 'sqlite' ? '(pos & 1099511627775) = 53' : 'seq = 53';
      const off =
        b.backend === 'sqlite'
          ? 'drop trigger audit_records_no_update'
          : 'alter table audit_records disable trigger audit_records_no_update';
      const on = b.backend === 'sqlite' ? null : 'alter table audit_records enable trigger audit_records_no_update';
      const zero = b.backend === 'sqlite' ? `x'${'00'.repeat(32)}'` : `'\\x${'00'.repeat(32)}'::bytea`;
      const orig = b.backend === 'sqlite' ? `x'${sealed[52]!.meta_commitment}'` : `'\\x${sealed[52]!.meta_commitment}'::bytea`;
      await ts.admin.query(off);
      try {
        await ts.admin.query(`update audit_records set meta_commitment = ${zero} where ${where}`);
        let report = await verify();
        assert.equal(report.ok, false);
        assert.equal(report.chain.break_at, 53);
        await ts.admin.query(`update audit_records set meta_commitment = ${orig} where ${where}`);
        assert.equal((await verify()).ok, true, 'restored');
        await ts.admin.query(`update audit_records set meta = '{"requester":"someone else"}' where ${where}`);
        report = await verify();
        assert.equal(report.ok, false);
        assert.equal(report.chain.break_at, 53);
      } finally {
        if (on) await ts.admin.query(on);
      }
    });
  });
}
