/**
 * The exactly-once core of ingest on both backends (real SQLite file, real Postgres with RLS):
 * a re-sent batch adds nothing; a crash between the store commit and the ledger record is repaired
 * by the re-send with exactly one `ingest.batch` record; concurrent sends of one batch id count once.
 */
import { foldRecent } from '../../src/modules/accessmap/recent-edges.js';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { LedgerService } from '../../src/ledger/ledger-service.js';
import { readRecords } from '../../src/ledger/ledger-store.js';
import { nowTimestamp } from '../../src/ledger/time.js';
import { uuid7 } from '../../src/ledger/uuid7.js';
import type { Principal } from '../../src/auth/principal.js';
import type { Services } from '../../src/serve/services.js';
import { commitBatch, LEDGER_ACTION } from '../../src/grpc/ingest-commit.js';
import type { CallIdentity } from '../../src/grpc/call-auth.js';
import { NOTE_FLUSH_MS } from '../../src/grpc/ingest-group.js';
import type { BatchMessage } from '../../src/grpc/ingest-items.js';
import { testStores, type TestStore } from '../helpers/stores.js';

const principal = { actor: 'token:test', actorKind: 'token' } as Principal;

function batch(id: string, refs: string[]): BatchMessage {
  return {
    batch_id: id,
    collector: 'unit',
    edges: refs.map((r) => ({
      origin_kind: 'identity',
      origin_id: '',
      origin_ref: 'sa',
      resource_id: '',
      resource_ref: r,
      mode: 'r',
      confidence: 'high',
      signal_source: 'unit',
      observed_at: '',
      attribution: '',
      count: 0,
    })),
    findings: [],
    costs: [],
  };
}

for (const b of await testStores()) {
  describe(`${b.backend}: ingest commit is exactly once`, { skip: b.skip }, () => {
    let ts: TestStore;
    let ledger: LedgerService;
    let services: Services;
    let who: CallIdentity;
    const tenant = uuid7();

    // access_edges read directly: what waits in the recent level (SQLite) is folded in first, as every read of the service does.
    const count = async (ref: string) => (await foldRecent(services.store), services.store.withTenant(tenant, async (tx) => {
      const node = await tx
        .selectFrom('access_nodes')
        .select('id')
        .where('tenant_id', '=', tenant)
        .where('ref', '=', ref)
        .executeTakeFirst();
      if (!node) return 0;
      const rows = await tx
        .selectFrom('access_edges')
        .select('observed_count')
        .where('tenant_id', '=', tenant)
        .where('resource_id', '=', node.id)
        .execute();
      return rows.reduce((n, r) => n + Number(r.observed_count), 0);
    }));
    const ledgerRecords = (id: string) =>
      services.store.withTenant(tenant, (tx) => readRecords(tx, tenant, 1, 1000, { action: LEDGER_ACTION, target_id: id }));

    before(async () => {
      ts = await b.create();
      await ts.store.migrate();
      ledger = await LedgerService.open({ store: ts.store, dataDir: ts.config.dataDir, threads: 0, checkpointIntervalMs: 0, env: {} });
      services = { store: ts.store, audit: ledger.sink, log: pino({ level: 'silent' }) } as unknown as Services;
      await ts.store.transaction((tx) =>
        tx
          .insertInto('tenants')
          .values({ id: tenant, name: 'T', region: 'eu', status: 'active', created_at: nowTimestamp(), deleted_at: null })
          .execute(),
      );
      who = { principal, tenant, token: 'unused', requestId: 'r' };
    });
    after(async () => {
      await ledger?.close();
      await ts?.dispose();
    });

    test('accepted once, then DUPLICATE with the same ledger seq and nothing added', async () => {
      const id = randomUUID();
      const first = await commitBatch(services, who, batch(id, ['a', 'a', 'b']));
      assert.equal(first.status, 'ACCEPTED');
      assert.equal(first.accepted, 3);
      const again = await commitBatch(services, who, batch(id, ['a', 'a', 'b']));
      assert.equal(again.status, 'DUPLICATE');
      assert.equal(again.ledger_seq, first.ledger_seq);
      assert.equal(await count('a'), 2);
      assert.equal(await count('b'), 1);
      assert.equal((await ledgerRecords(id)).length, 1);
    });

    test('died after the ledger record but before noting it: the re-send finds the record, appends none', async () => {
      const id = randomUUID();
      const first = await commitBatch(services, who, batch(id, ['c']));
      // The note lands with a later transaction (at most NOTE_FLUSH_MS after an idle ack); wait for it, then undo it.
      const noted = () =>
        services.store.withTenant(tenant, (tx) =>
          tx
            .selectFrom('ingest_batches')
            .select('ledger_seq')
            .where('tenant_id', '=', tenant)
            .where('batch_id', '=', id)
            .executeTakeFirst(),
        );
      for (let i = 0; (await noted())?.ledger_seq === null; i++) {
        assert.ok(i < 100, 'ledger_seq is noted on the batch row');
        await new Promise((r) => setTimeout(r, NOTE_FLUSH_MS));
      }
      assert.equal(Number((await noted())?.ledger_seq), first.ledger_seq);
      await services.store.withTenant(tenant, (tx) =>
        tx.updateTable('ingest_batches').set({ ledger_seq: null }).where('tenant_id', '=', tenant).where('batch_id', '=', id).execute(),
      );
      const again = await commitBatch(services, who, batch(id, ['c']));
      assert.equal(again.status, 'DUPLICATE');
      assert.equal(again.ledger_seq, first.ledger_seq);
      assert.equal((await ledgerRecords(id)).length, 1);
      assert.equal(await count('c'), 1);
    });

    test('died after the store commit, before the ledger record: the re-send appends it exactly once', async () => {
      const id = randomUUID();
      // The state a crash between the two commits leaves: the batch row without any ledger record.
      const head = await services.store.withTenant(tenant, (tx) =>
        tx.selectFrom('audit_heads').select('seq').where('tenant_id', '=', tenant).executeTakeFirst(),
      );
      await services.store.withTenant(tenant, (tx) =>
        tx
          .insertInto('ingest_batches')
          .values({
            tenant_id: tenant,
            batch_id: id,
            collector: 'unit',
            accepted: 1,
            rejected: '[]',
            payload_hash: 'ab'.repeat(32),
            head_seq: Number(head?.seq ?? 0),
            ledger_seq: null,
            created_at: nowTimestamp(),
          })
          .execute(),
      );
      const again = await commitBatch(services, who, batch(id, ['d']));
      assert.equal(again.status, 'DUPLICATE');
      const recs = await ledgerRecords(id);
      assert.equal(recs.length, 1);
      assert.equal(recs[0]?.seq, again.ledger_seq);
      assert.equal(recs[0]?.payload_hash, 'ab'.repeat(32));
      assert.equal(await count('d'), 0, 'the re-send adds no edges: they were committed with the row');
      const third = await commitBatch(services, who, batch(id, ['d']));
      assert.equal(third.ledger_seq, again.ledger_seq);
      assert.equal((await ledgerRecords(id)).length, 1);
    });

    test(
      'batches of many streams share a transaction: each answered on its own, re-sends among them DUPLICATE, every record once',
      async () => {
        const old = randomUUID();
        const first = await commitBatch(services, who, batch(old, ['g0']));
        const ids = Array.from({ length: 40 }, () => randomUUID());
        const acks = await Promise.all([
          commitBatch(services, who, batch(old, ['g0'])),
          ...ids.map((id, i) => commitBatch(services, who, batch(id, [`g${i % 4}`, 'g-all']))),
        ]);
        assert.equal(acks[0]?.status, 'DUPLICATE');
        assert.equal(acks[0]?.ledger_seq, first.ledger_seq);
        for (const [i, a] of acks.slice(1).entries()) {
          assert.equal(a.status, 'ACCEPTED');
          assert.equal(a.batch_id, ids[i]);
          assert.equal(a.accepted, 2);
        }
        assert.equal(new Set(acks.map((a) => a.ledger_seq)).size, acks.length, 'one ledger record per batch');
        assert.equal(await count('g-all'), 40);
        assert.equal(await count('g0'), 1 + 10);
        for (const id of [old, ...ids]) assert.equal((await ledgerRecords(id)).length, 1);
        const v = await ledger.verify(tenant);
        assert.equal(v.chain.ok, true);
      },
    );

    test('concurrent sends of one batch id: one ACCEPTED, the others DUPLICATE, counted once', async () => {
      const id = randomUUID();
      const acks = await Promise.all([1, 2, 3].map(() => commitBatch(services, who, batch(id, ['e']))));
      assert.deepEqual(acks.map((a) => a.status).sort(), ['ACCEPTED', 'DUPLICATE', 'DUPLICATE']);
      assert.equal(await count('e'), 1);
      assert.equal((await ledgerRecords(id)).length, 1);
      const v = await ledger.verify(tenant);
      assert.equal(v.chain.ok, true);
    });
  });
}
