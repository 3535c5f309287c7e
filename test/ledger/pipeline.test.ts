import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkpointDraft } from '../../src/ledger/checkpoint.js';
import { Keyring } from '../../src/ledger/keyring.js';
import { LedgerService } from '../../src/ledger/ledger-service.js';
import { readHead, readRange } from '../../src/ledger/ledger-store.js';
import { LedgerPipeline, PipelineClosedError } from '../../src/ledger/pipeline.js';
import { SYSTEM_TENANT, type AuditRecord } from '../../src/ledger/record.js';
import { verifyRecords } from '../../src/ledger/verify.js';
import { createWorkerPool } from '../../src/workers/pool.js';
import { testStores, type TestStore, type TestStoreBackend } from '../helpers/stores.js';
import type { Signer } from '../../src/ledger/signers.js';
import { OTHER_TENANT, TENANT, draft } from './fixtures.js';
import { readEvents } from '../../src/events/event-log.js';
import type { BusEvent } from '../../src/events/event-types.js';
import { nowTimestamp } from '../../src/ledger/time.js';
import { newId } from '../../src/store/ids.js';
import { addTenant } from '../store/store-fixtures.js';

async function setup(ts: TestStore, opts: { pool?: boolean; maxBatch?: number } = {}) {
  await ts.store.migrate();
  const keyring = await Keyring.open({ dataDir: ts.config.dataDir, env: {} });
  const pool = opts.pool ? createWorkerPool({ threads: 2, signingKeys: [keyring.signingKey()] }) : null;
  const pipeline = new LedgerPipeline({ store: ts.store, signer: () => keyring.active, pool, maxBatch: opts.maxBatch ?? 512 });
  return {
    keyring,
    pipeline,
    async close() {
      await pipeline.close();
      await pool?.close();
    },
  };
}

async function stored(ts: TestStore, tenant: string): Promise<AuditRecord[]> {
  return ts.store.withTenant(tenant, (tx) => readRange(tx, tenant, 1, 1_000_000));
}

for (const b of await testStores()) {
  describe(`${b.backend}: ledger pipeline`, { skip: b.skip }, () => {
    test('concurrent appends commit as one contiguous, signed chain and resolve with their stored records', async (t) => {
      const ts = await b.create();
      t.after(() => ts.dispose());
      const l = await setup(ts, { pool: true, maxBatch: 64 });
      t.after(() => l.close());
      const n = 700;
      const results = await Promise.all(Array.from({ length: n }, (_, i) => l.pipeline.append(TENANT, draft(i))));
      assert.deepEqual(results.map((r) => r.seq).sort((a, b) => a - b), Array.from({ length: n }, (_, i) => i + 1));
      // Each append's promise carries its own draft's record.
      results.forEach((r, i) => assert.equal(r.target_id, `agent-${i}`));
      const rows = await stored(ts, TENANT);
      assert.equal(rows.length, n);
      assert.deepEqual(rows, [...results].sort((a, b) => a.seq - b.seq), 'stored rows equal what the appends resolved with');
      const head = await ts.store.withTenant(TENANT, (tx) => readHead(tx, TENANT));
      assert.deepEqual(head, { seq: n, hash: rows[n - 1]?.hash });
      const report = verifyRecords(rows, { keys: l.keyring.keySet(TENANT), head });
      assert.equal(report.ok, true, JSON.stringify(report));
      assert.equal(report.signatures.checked, n);
    });

    test('small batches are signed on this thread, large ones in the pool; the chain verifies across both', async (t) => {
      const ts = await b.create();
      t.after(() => ts.dispose());
      await ts.store.migrate();
      const keyring = await Keyring.open({ dataDir: ts.config.dataDir, env: {} });
      const real = createWorkerPool({ threads: 2, signingKeys: [keyring.signingKey()] });
      t.after(() => real.close());
      const slices: number[] = [];
      const pool = Object.create(real) as typeof real;
      pool.signBatch = (req, signal) => {
        slices.push(req.hashes.length / 32);
        return real.signBatch(req, signal);
      };
      const pipeline = new LedgerPipeline({ store: ts.store, signer: () => keyring.active, pool, maxBatch: 512 });
      t.after(() => pipeline.close());
      await pipeline.append(TENANT, draft(0));
      await Promise.all(Array.from({ length: 5 }, (_, i) => pipeline.append(TENANT, draft(1 + i))));
      assert.deepEqual(slices, [], 'batches of 1 and 5 did not go to the pool');
      // 200 queued from idle: cut in two halves of 100, each split over the pool's two threads.
      await Promise.all(Array.from({ length: 200 }, (_, i) => pipeline.append(TENANT, draft(10 + i))));
      assert.equal(slices.reduce((a, n) => a + n, 0), 200, 'every record of the large batches was signed in the pool');
      assert.ok(slices.length >= 2);
      await pipeline.append(TENANT, draft(300));
      const rows = await stored(ts, TENANT);
      assert.equal(rows.length, 207);
      const head = await ts.store.withTenant(TENANT, (tx) => readHead(tx, TENANT));
      const report = verifyRecords(rows, { keys: keyring.keySet(TENANT), head });
      assert.equal(report.ok, true, JSON.stringify(report));
      assert.equal(report.signatures.checked, 207);
    });

    test('events handed to appends are written in their records\' commit, sequenced; a failed commit writes none', async (t) => {
      const ts = await b.create();
      t.after(() => ts.dispose());
      const l = await setup(ts, { maxBatch: 16 });
      t.after(() => l.close());
      const tenant = await addTenant(ts.store);
      const event = (i: number): BusEvent => ({
        id: newId(), type: 'pep.decided', source: '/svc/governance', time: nowTimestamp(), tenant,
        subject: `pep_decision/${i}`, data: { i },
      });
      const events = Array.from({ length: 50 }, (_, i) => event(i));
      const records = await Promise.all(events.map((e, i) => l.pipeline.append(tenant, draft(i), undefined, [e])));
      const bySeq = events.map((e, i) => [records[i]!.seq, e.sequence] as const).sort((x, y) => x[0] - y[0]);
      const oneToFifty = Array.from({ length: 50 }, (_, i) => i + 1);
      assert.deepEqual(bySeq.map(([, s]) => s), oneToFifty, 'sequences follow the chain order, without gaps');
      const logged = async () => ts.store.withTenant(tenant, (tx) => readEvents(tx, tenant, 0, 1000));
      const inOrder = [...events].sort((x, y) => x.sequence! - y.sequence!);
      assert.deepEqual((await logged()).map((e) => [e.sequence, e.id]), inOrder.map((e) => [e.sequence, e.id]));
      // Many events on one record (SQLite writes them in multi-row statements and single rows).
      const bulk = Array.from({ length: 70 }, (_, i) => event(200 + i));
      await l.pipeline.append(tenant, draft(200), undefined, bulk);
      assert.deepEqual(bulk.map((e) => e.sequence), Array.from({ length: 70 }, (_, i) => 51 + i));
      const row = (e: BusEvent) => [e.sequence, e.id, e.data['i']];
      assert.deepEqual((await logged()).slice(50).map(row), bulk.map(row));
      // An event id already logged fails the commit: neither the record nor any event of it stays.
      const dup = { ...event(99), id: events[0]!.id };
      await assert.rejects(l.pipeline.append(tenant, draft(99), undefined, [event(98), dup]));
      assert.equal((await stored(ts, tenant)).length, 51);
      assert.equal((await logged()).length, 120);
      const next = event(100);
      await l.pipeline.append(tenant, draft(100), undefined, [next]);
      assert.equal(next.sequence, 121, 'the failed commit used no sequence');
    });

    test('chains are independent; a lone append is not held back waiting for a batch', async (t) => {
      const ts = await b.create();
      t.after(() => ts.dispose());
      const l = await setup(ts, { pool: true });
      t.after(() => l.close());
      await l.pipeline.append(SYSTEM_TENANT, draft(0)); // warm-up: tail read, worker JIT
      const started = performance.now();
      const r = await l.pipeline.append(SYSTEM_TENANT, draft(1));
      const elapsed = performance.now() - started;
      assert.equal(r.seq, 2);
      assert.ok(elapsed < 250, `a lone append took ${elapsed.toFixed(1)} ms`);
      const [a, c] = await Promise.all([l.pipeline.append(TENANT, draft(2)), l.pipeline.append(OTHER_TENANT, draft(3))]);
      assert.equal(a.seq, 1);
      assert.equal(c.seq, 1);
      assert.equal((await stored(ts, OTHER_TENANT)).length, 1);
    });

    test('a deep queue met from idle is cut into two overlapping batches; small queues stay whole', async (t) => {
      const ts = await b.create();
      t.after(() => ts.dispose());
      await ts.store.migrate();
      const keyring = await Keyring.open({ dataDir: ts.config.dataDir, env: {} });
      const sizes: number[] = [];
      const pipeline = new LedgerPipeline({
        store: ts.store,
        signer: () => keyring.active,
        pool: null,
        onCommit: (_t, _tail, records) => sizes.push(records.length),
      });
      t.after(() => pipeline.close());
      await pipeline.append(TENANT, draft(0)); // the tail is loaded; the chain is idle again
      await Promise.all(Array.from({ length: 64 }, (_, i) => pipeline.append(TENANT, draft(1 + i))));
      assert.deepEqual(sizes, [1, 32, 32], '64 queued appends: two batches of 32, in seq order');
      sizes.length = 0;
      await Promise.all(Array.from({ length: 31 }, (_, i) => pipeline.append(TENANT, draft(100 + i))));
      assert.deepEqual(sizes, [31], 'below 32 queued appends the batch is not cut');
      const rows = await stored(ts, TENANT);
      assert.equal(rows.length, 96);
      assert.equal(verifyRecords(rows, { keys: keyring.keySet(TENANT) }).ok, true);
    });

    test('a malformed draft is rejected alone; the rest of its batch commits', async (t) => {
      const ts = await b.create();
      t.after(() => ts.dispose());
      const l = await setup(ts);
      t.after(() => l.close());
      const bad = { ...draft(1), payload_hash: 'NOT-HEX' };
      const settled = await Promise.allSettled([
        l.pipeline.append(TENANT, draft(0)),
        l.pipeline.append(TENANT, bad),
        l.pipeline.append(TENANT, draft(2)),
      ]);
      assert.equal(settled[0].status, 'fulfilled');
      assert.equal(settled[1].status, 'rejected');
      assert.equal(settled[2].status, 'fulfilled');
      const rows = await stored(ts, TENANT);
      assert.deepEqual(rows.map((r) => r.target_id), ['agent-0', 'agent-2']);
      // A checkpoint first in an empty chain has nothing to attest: refused alone, the rest commits.
      const fresh = await Promise.allSettled([
        l.pipeline.append(OTHER_TENANT, checkpointDraft()),
        l.pipeline.append(OTHER_TENANT, draft(5)),
      ]);
      assert.deepEqual(fresh.map((s) => s.status), ['rejected', 'fulfilled']);
      assert.equal((await stored(ts, OTHER_TENANT)).length, 1);
      assert.equal(verifyRecords(rows, { keys: l.keyring.keySet(TENANT) }).ok, true);
    });

    test('a batch whose commit fails rejects every append of it and nothing of it is stored', async (t) => {
      const ts = await b.create();
      t.after(() => ts.dispose());
      const l = await setup(ts);
      t.after(() => l.close());
      await l.pipeline.append(TENANT, draft(0));
      // Occupy seq 2 behind the ledger's back (as the owner): the next batch collides on (tenant, seq).
      const [first] = await stored(ts, TENANT);
      const row =
        ts.backend === 'sqlite'
          ? `insert into audit_records select pos + 1, id, occurred_at, actor, actor_kind, action, target_kind, target_id, meta, ` +
            `meta_blind, meta_commitment, payload_hash, hash, sig, key_id from audit_records where (pos & 1099511627775) = 1`
          : `insert into audit_records select tenant_id, 2, id, occurred_at, actor, actor_kind, action, target_kind, target_id, meta, ` +
            `meta_blind, meta_commitment, payload_hash, hash, sig, key_id from audit_records where seq = 1`;
      if (ts.backend === 'postgres') {
        await ts.admin.query(`begin; set local app.tenant_id = '${TENANT}'; ${row}; commit;`);
      } else {
        await ts.admin.query(row);
      }
      const settled = await Promise.allSettled([l.pipeline.append(TENANT, draft(1)), l.pipeline.append(TENANT, draft(2))]);
      assert.deepEqual(settled.map((s) => s.status), ['rejected', 'rejected']);
      const rows = await stored(ts, TENANT);
      assert.equal(rows.length, 2);
      assert.equal(rows[0]?.hash, first?.hash);
      const head = await ts.store.withTenant(TENANT, (tx) => readHead(tx, TENANT));
      assert.equal(head?.seq, 1, 'the head did not move');
    });

    test('checkpoint drafts seal into verifiable checkpoints; appends after close are refused', async (t) => {
      const ts = await b.create();
      t.after(() => ts.dispose());
      const l = await setup(ts, { pool: true });
      for (let i = 0; i < 5; i++) await l.pipeline.append(TENANT, draft(i));
      const cp = await l.pipeline.append(TENANT, checkpointDraft());
      assert.equal(cp.seq, 6);
      assert.equal(JSON.parse(cp.meta ?? 'null').attested_seq, 5);
      await l.close();
      await assert.rejects(l.pipeline.append(TENANT, draft(9)), PipelineClosedError);
      const report = verifyRecords(await stored(ts, TENANT), { keys: l.keyring.keySet(TENANT) });
      assert.equal(report.ok, true);
      assert.equal(report.checkpoints.status, 'ok');
      assert.equal(report.checkpoints.latest_attested_seq, 5);
    });

    test('the checkpoint timer checkpoints chains that moved, and only those', async (t) => {
      const ts = await b.create();
      t.after(() => ts.dispose());
      await ts.store.migrate();
      const ledger = await LedgerService.open({
        store: ts.store,
        dataDir: ts.config.dataDir,
        threads: 0,
        checkpointIntervalMs: 100,
        env: {},
      });
      t.after(() => ledger.close());
      await ledger.append(TENANT, draft(0));
      await ledger.append(TENANT, draft(1));
      const waitFor = async (pred: () => Promise<boolean>): Promise<void> => {
        for (let i = 0; i < 100 && !(await pred()); i++) await new Promise((r) => setTimeout(r, 50));
      };
      await waitFor(async () => (await ledger.read(TENANT, 1, 10)).head_seq >= 3);
      const rows = (await ledger.read(TENANT, 1, 10)).items;
      assert.deepEqual(rows.map((r) => r.action), [draft(0).action, draft(1).action, 'audit.checkpoint']);
      assert.equal(JSON.parse(rows[2]?.meta ?? '{}').attested_seq, 2);
      await new Promise((r) => setTimeout(r, 400));
      assert.equal((await ledger.read(TENANT, 1, 10)).head_seq, 3, 'an unmoved chain gets no further checkpoint');
      assert.equal((await ledger.read(OTHER_TENANT, 1, 10)).head_seq, 0, 'an empty chain gets none');
      assert.equal((await ledger.verify(TENANT)).checkpoints.status, 'ok');
    });

    test('the store refuses UPDATE and DELETE of audit records', async (t) => {
      const ts = await b.create();
      t.after(() => ts.dispose());
      const l = await setup(ts);
      t.after(() => l.close());
      await l.pipeline.append(TENANT, draft(0));
      await assert.rejects(ts.store.withTenant(TENANT, (tx) => tx.updateTable('audit_records').set({ actor: 'x' }).execute()));
      await assert.rejects(ts.store.withTenant(TENANT, (tx) => tx.deleteFrom('audit_records').execute()));
      await assert.rejects(ts.admin.query(`delete from audit_records`), /append-only/);
      await assert.rejects(ts.admin.query(`update audit_records set actor = 'x'`), /append-only/);
      assert.equal((await stored(ts, TENANT)).length, 1);
    });
  });
}

/** Two pipelines on two stores of one Postgres database, as two replicas have; `signer` wraps the keyring's. */
async function twoPipelines(t: { after(fn: () => unknown): void }, pg: TestStoreBackend, wrap = (s: Signer): Signer => s) {
  const ts = await pg.create();
  t.after(() => ts.dispose());
  await ts.store.migrate();
  const other = await ts.reopen();
  const keyring = await Keyring.open({ dataDir: ts.config.dataDir, env: {} });
  const signer = () => wrap(keyring.active);
  const p1 = new LedgerPipeline({ store: ts.store, signer, pool: null, maxBatch: 16 });
  const p2 = new LedgerPipeline({ store: other, signer, pool: null, maxBatch: 16 });
  return { ts, keyring, p1, p2 };
}

describe('postgres: two pipelines on one database never fork a chain', async () => {
  const [, pg] = await testStores();
  test('interleaved appends from two processes-worth of stores form one chain', { skip: pg?.skip }, async (t) => {
    if (pg === undefined) return;
    const { ts, keyring, p1, p2 } = await twoPipelines(t, pg);
    const all: Promise<AuditRecord>[] = [];
    for (let i = 0; i < 200; i++) all.push((i % 2 === 0 ? p1 : p2).append(TENANT, draft(i)));
    const results = await Promise.all(all);
    await p1.close();
    await p2.close();
    assert.deepEqual(results.map((r) => r.seq).sort((a, b) => a - b), Array.from({ length: 200 }, (_, i) => i + 1));
    const rows = await stored(ts, TENANT);
    assert.equal(rows.length, 200);
    assert.equal(verifyRecords(rows, { keys: keyring.keySet(TENANT) }).ok, true);
  });
});

describe('postgres: a chain written through two pipelines is sealed once per record', async () => {
  const [, pg] = await testStores();
  const name = 'once another process moves the head, batches are sealed under the chain lock, not ahead of it and again';
  test(name, { skip: pg?.skip }, async (t) => {
    if (pg === undefined) return;
    let signatures = 0;
    const counting = (s: Signer): Signer => ({
      algorithm: s.algorithm,
      keyId: s.keyId,
      publicKey: s.publicKey,
      sign: (d: Uint8Array) => (signatures++, s.sign(d)),
    });
    const { ts, keyring, p1, p2 } = await twoPipelines(t, pg, counting);
    // Two closed-loop writers per pipeline, like two replicas serving requests at once.
    const perWriter = 60;
    let next = 0;
    const writer = async (p: LedgerPipeline) => {
      for (let i = 0; i < perWriter; i++) await p.append(TENANT, draft(next++));
    };
    await Promise.all([writer(p1), writer(p2), writer(p1), writer(p2)]);
    await p1.close();
    await p2.close();
    const n = 4 * perWriter;
    const rows = await stored(ts, TENANT);
    assert.deepEqual(rows.map((r) => r.seq), Array.from({ length: n }, (_, i) => i + 1));
    assert.equal(verifyRecords(rows, { keys: keyring.keySet(TENANT) }).ok, true);
    // Sealed ahead, nearly every batch would be sealed a second time on the head the other pipeline
    // moved; sealed under the lock, only the batches in flight when the sharing was noticed are.
    assert.ok(signatures <= n + 3 * 16 * 2, `${signatures} signatures for ${n} records`);
  });
});
