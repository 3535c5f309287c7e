/**
 * `svc keys rotate` (offline, on the data directory of a stopped server): the old key is retired at
 * each chain's head, every chain gets an `audit.key.rotate` record signed by the new key, both keys
 * stay published with their seq ranges, and the chains still verify after more appends.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { LedgerService } from '../../src/ledger/ledger-service.js';
import { SYSTEM_TENANT } from '../../src/ledger/record.js';
import { openStore } from '../../src/store/store.js';
import { draft, TENANT } from '../ledger/fixtures.js';
import { jsonOut, runSvc, tempDir } from './harness.js';

test('keys rotate retires the old key at each head and the chains verify across the change', async (t) => {
  const dataDir = tempDir('svc-rotate-');
  t.after(() => rm(dataDir, { recursive: true, force: true }));
  const open = async () => {
    const store = await openStore({ backend: 'sqlite', dataDir });
    await store.migrate();
    const ledger = await LedgerService.open({ store, dataDir, threads: 0, checkpointIntervalMs: 0, env: {} });
    return { store, ledger, close: async () => { await ledger.close(); await store.close(); } };
  };
  const first = await open();
  await first.store.transaction((tx) =>
    tx
      .insertInto('tenants')
      .values({ id: TENANT, name: 'acme', region: 'eu', status: 'active', created_at: '2026-11-22T07:00:00.000000000Z', deleted_at: null })
      .execute(),
  );
  for (let i = 0; i < 10; i++) await first.ledger.append(TENANT, draft(i));
  for (let i = 0; i < 4; i++) await first.ledger.append(SYSTEM_TENANT, draft(i));
  const oldKey = first.ledger.keyring.active.keyId;
  await first.close();

  const refused = await runSvc(['keys', 'rotate', '--data-dir', dataDir]);
  assert.equal(refused.code, 2, 'no --yes in a non-interactive session');
  const run = await runSvc(['keys', 'rotate', '--data-dir', dataDir, '--algorithm', 'ecdsa-p256-sha256', '--yes', '-o', 'json']);
  assert.equal(run.code, 0, run.stderr);
  const out = jsonOut(run);
  assert.equal(out.old_key_id, oldKey);
  assert.notEqual(out.new_key_id, oldKey);
  assert.equal(out.algorithm, 'ecdsa-p256-sha256');
  assert.deepEqual(
    [...out.chains].sort((a: { tenant: string }, b: { tenant: string }) => a.tenant.localeCompare(b.tenant)),
    [
      { tenant: TENANT, last_seq_old_key: 10, rotate_seq: 11 },
      { tenant: SYSTEM_TENANT, last_seq_old_key: 4, rotate_seq: 5 },
    ].sort((a, b) => a.tenant.localeCompare(b.tenant)),
  );

  const second = await open();
  t.after(() => second.close());
  assert.equal(second.ledger.keyring.active.keyId, out.new_key_id);
  const r = await second.ledger.append(TENANT, draft(99));
  assert.equal(r.seq, 12);
  assert.equal(r.key_id, out.new_key_id);
  const rotate = (await second.ledger.read(TENANT, 11, 1)).items[0];
  assert.equal(rotate?.action, 'audit.key.rotate');
  assert.equal(rotate?.key_id, out.new_key_id);
  assert.deepEqual(JSON.parse(rotate?.meta ?? '{}').old_key_last_seq, 10);
  const keys = (await second.ledger.publishedKeys(TENANT)).keys.map((k) => ({
    key_id: k.key_id,
    first_seq: k.first_seq,
    last_seq: k.last_seq,
  }));
  assert.deepEqual(keys, [
    { key_id: oldKey, first_seq: 1, last_seq: 10 },
    { key_id: out.new_key_id, first_seq: 11, last_seq: undefined },
  ]);
  for (const tenant of [TENANT, SYSTEM_TENANT]) {
    const report = await second.ledger.verify(tenant);
    assert.equal(report.ok, true, `${tenant}: ${JSON.stringify(report)}`);
  }
});
