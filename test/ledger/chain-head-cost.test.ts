/**
 * The head checks of every append (and of every audited change's transaction) cost a few index
 * probes however long the chain is. On Postgres they once read the whole chain: a correlated
 * `exists` the planner turned into a hashed scan of every record of the tenant, and the heads
 * trigger's "nothing beyond the head" test, which a generic plan runs as a sequential scan. Each
 * append then cost time in proportion to the chain, so a long chain slowed every write. The
 * transaction's own table statistics (`pg_stat_xact_user_tables`) count the rows those checks read.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { assertChainAppendable, assertHeadConsistent } from '../../src/ledger/chain-head.js';
import { Keyring } from '../../src/ledger/keyring.js';
import { insertRecords, readHead } from '../../src/ledger/ledger-store.js';
import { hashBatch, applySignatures, signHashes } from '../../src/ledger/chain.js';
import { testStores } from '../helpers/stores.js';
import { TENANT, draft } from './fixtures.js';

const [, pg] = await testStores();
const RECORDS = 4_000;

describe('postgres: head checks read a few rows, not the chain', { skip: pg?.skip }, () => {
  test(`on a chain of ${RECORDS} records: the head check, the change guard and ten appends read no record by scanning`, async (t) => {
    if (pg === undefined) return;
    const ts = await pg.create();
    t.after(() => ts.dispose());
    await ts.store.migrate();
    const keyring = await Keyring.open({ dataDir: ts.config.dataDir, env: {} });
    // One session, as a pooled connection of a running server: the heads trigger first runs while the
    // chain is short (often enough for PL/pgSQL to cache a plan), then the chain grows to RECORDS.
    const read = await ts.store.withTenant(TENANT, async (tx) => {
      let head = await readHead(tx, TENANT);
      let next = 0;
      const append = async (n: number) => {
        const hashed = hashBatch(head, TENANT, Array.from({ length: n }, () => draft(next++)), keyring.active);
        const records = applySignatures(hashed, signHashes(keyring.active, TENANT, hashed.firstSeq, hashed.hashes));
        await insertRecords(tx, TENANT, records, head);
        head = hashed.tail;
      };
      for (let i = 0; i < 10; i++) await append(3);
      while (next < RECORDS) await append(Math.min(500, RECORDS - next));
      const rows = async () =>
        Number(
          (
            await sql<{ n: string }>`select coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) as n
              from pg_stat_xact_user_tables where relname = 'audit_records'`.execute(tx)
          ).rows[0]?.n ?? 0,
        );
      const before = await rows();
      await assertHeadConsistent(tx, TENANT);
      await assertChainAppendable(tx, TENANT);
      const checks = (await rows()) - before;
      for (let i = 0; i < 10; i++) await append(3);
      return { checks, appends: (await rows()) - before - checks };
    });
    assert.ok(read.checks <= 10, `the head check and the change guard read ${read.checks} audit_records rows`);
    // Each append's trigger reads its 3 new records and a few around the head.
    assert.ok(read.appends <= 10 * 10, `ten appends of 3 records read ${read.appends} audit_records rows`);
  });
});
