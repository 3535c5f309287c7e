/**
 * Issue 30 item 2, on both backends. (1) `svc keys rotate` refuses a data directory that a running
 * `svc serve` holds (it would go on signing with the key the keyring has just retired), and rotates
 * once the server has stopped. (2) Records signed by a key outside its range are rejected
 * (`key-out-of-range`): a ledger that kept the old key after a rotation signs on; the server's verify,
 * the stale ledger's own verify, `svc audit verify` against the server and offline on every export
 * format, all with both public keys, say so.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { terminatorLine } from '../../src/core/audit-export/export-stream.js';
import { acceptedTokens, encoderFor } from '../../src/encoders/registry.js';
import { Keyring } from '../../src/ledger/keyring.js';
import { LedgerService } from '../../src/ledger/ledger-service.js';
import { readRange } from '../../src/ledger/ledger-store.js';
import { rotateSigningKey } from '../../src/ledger/rotation.js';
import { nowTimestamp } from '../../src/ledger/time.js';
import { testStores } from '../helpers/stores.js';
import { createTempDatabase, pgTestDsn } from '../helpers/pg.js';
import { call, setupAndLogin, startServer } from '../helpers/server.js';
import { draft, TENANT } from '../ledger/fixtures.js';
import { jsonOut, runSvc, tempDir } from './harness.js';

const ADMIN = { email: 'root@example.test', password: 'correct horse battery staple' };

for (const backend of ['sqlite', 'postgres'] as const) {
  test(`${backend}: svc keys rotate refuses the data directory of a running svc serve, and rotates once it stopped`, async (t) => {
    const storeArgs: string[] = [];
    if (backend === 'postgres') {
      const target = await pgTestDsn();
      if (target.skip !== undefined) return t.skip(target.skip);
      const db = await createTempDatabase(target.dsn);
      t.after(() => db.drop());
      storeArgs.push('--store', 'postgres', '--dsn', db.dsn);
    }
    const dataDir = tempDir('svc-rotate-live-');
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    const server = await startServer({ dataDir, args: storeArgs, env: { SERVICE_AUDIT_CHECKPOINT_INTERVAL: '0' } });
    let stopped = false;
    t.after(async () => {
      if (!stopped) await server.stop();
    });
    const { tenant, token } = await setupAndLogin(server, ADMIN);
    const keyring = () => readFileSync(join(dataDir, 'audit-keys', 'keyring.json'), 'utf8');
    const before = keyring();

    const refused = await runSvc(['keys', 'rotate', '--data-dir', dataDir, ...storeArgs, '--yes']);
    assert.equal(refused.code, 5, `refused with exit 5 (conflict); stderr:\n${refused.stderr}`);
    assert.match(refused.stderr, /svc serve is running on the data directory/);
    assert.match(refused.stderr, new RegExp(`pid ${server.child.pid}`));
    assert.equal(keyring(), before, 'the keyring is untouched');
    // The server still signs with the one key, and its chain verifies.
    const v = await call(server, 'GET', '/v1/audit/verify', { headers: { authorization: `Bearer ${token}`, 'x-service-tenant': tenant } });
    assert.equal(v.json().ok, true, v.text);

    assert.equal(await server.stop(), 0);
    stopped = true;
    const run = await runSvc(['keys', 'rotate', '--data-dir', dataDir, ...storeArgs, '--yes', '-o', 'json']);
    assert.equal(run.code, 0, run.stderr);
    assert.notEqual(keyring(), before);
    assert.equal(jsonOut(run).chains.some((c: { tenant: string }) => c.tenant === tenant), true);
  });
}

for (const b of await testStores()) {
  describe(`${b.backend}: a key signing outside its range`, { skip: b.skip }, () => {
    test('a ledger that kept the retired key signs on: key-out-of-range online, offline and in every export format', async (t) => {
      const ts = await b.create();
      t.after(() => ts.dispose());
      await ts.store.migrate();
      await ts.store.transaction((tx) =>
        tx
          .insertInto('tenants')
          .values({ id: TENANT, name: 'acme', region: 'eu', status: 'active', created_at: nowTimestamp(), deleted_at: null })
          .execute(),
      );
      const open = () =>
        LedgerService.open({
          store: ts.store,
          dataDir: ts.config.dataDir,
          threads: 1,
          checkpointIntervalMs: 0,
          env: {},
          intentRecovery: { intervalMs: 0 },
        });
      // The running server: its keyring and workers hold the key in memory.
      const stale = await open();
      t.after(() => stale.close());
      for (let i = 1; i <= 10; i++) await stale.append(TENANT, draft(i));
      const oldKey = stale.keyring.active;
      // The rotation the lock now refuses, done behind the running ledger's back.
      const rotated = await rotateSigningKey(ts.store, await Keyring.open({ dataDir: ts.config.dataDir, env: {}, store: ts.store }));
      assert.deepEqual(rotated.chains.find((c) => c.tenant === TENANT), { tenant: TENANT, last_seq_old_key: 10, rotate_seq: 11 });
      if (b.backend === 'postgres') {
        // The keyring is the deployment's, in the database (docs/scale-out.md): the ledger that kept
        // the retired key refuses to sign instead, so no record lands outside its key's range.
        await assert.rejects(stale.append(TENANT, draft(12)), /is no longer the deployment's active key/);
        const fresh = await open();
        t.after(() => fresh.close());
        const report = await fresh.verify(TENANT);
        assert.equal(report.ok, true, JSON.stringify(report));
        assert.equal((await stale.verify(TENANT)).ok, true, 'the stale ledger reads the rotation from the database too');
        return;
      }
      // The running ledger goes on with the retired key: seq 12..15.
      for (let i = 12; i <= 15; i++) assert.equal((await stale.append(TENANT, draft(i))).key_id, oldKey.keyId);

      const fresh = await open();
      t.after(() => fresh.close());
      const newKey = fresh.keyring.active;
      const expect = (
        r: { ok: boolean; signatures: { reason: string | null; first_bad_seq: number | null; checked: number } },
        what: string,
      ) => {
        assert.equal(r.ok, false, what);
        assert.deepEqual([r.signatures.reason, r.signatures.first_bad_seq, r.signatures.checked], ['key-out-of-range', 12, 11], what);
      };
      expect(await fresh.verify(TENANT), 'the server after a restart (published ranges)');
      // The server that kept the old key does not know the new one: no verdict (never ok).
      const staleReport = await stale.verify(TENANT);
      assert.deepEqual([staleReport.ok, staleReport.signatures.reason, staleReport.signatures.first_bad_seq], [false, 'unknown-key', 11]);

      // Offline, with both public keys pinned and no ranges at all.
      const published = fresh.keyring.publishedKeys(TENANT).keys;
      assert.deepEqual(published.map((k) => k.key_id), [oldKey.keyId, newKey.keyId]);
      const pubkeys = published.flatMap((k) => ['--pubkey', `${k.algorithm}:${k.public_key}`]);
      const records = await ts.store.withTenant(TENANT, (tx) => readRange(tx, TENANT, 1, 100));
      assert.equal(records.length, 15);
      const dir = tempDir('svc-key-range-');
      t.after(() => rmSync(dir, { recursive: true, force: true }));
      const OPTS = { device: { vendor: 'svc', product: 'control-plane', version: '1.0.0' }, hostname: 'svc-test', procid: '1' };
      const files: Array<[string, string]> = [
        [
          'records',
          records.map((r) => JSON.stringify(r)).join('\n') +
            '\n' +
            JSON.stringify({ export_complete: true, count: 15, last_seq: 15 }) +
            '\n',
        ],
      ];
      for (const format of acceptedTokens('ledger_export')) {
        const enc = encoderFor('ledger_export', format);
        files.push([format, records.map((r) => enc.encodeRecord(r, OPTS)).join('\n') + '\n' + terminatorLine(enc.json, 15, 15)]);
      }
      for (const [format, text] of files) {
        const path = join(dir, `chain.${format}`);
        writeFileSync(path, text);
        const run = await runSvc(['audit', 'verify', '--file', path, ...pubkeys, '--strict', '-o', 'json'], { timeoutMs: 60_000 });
        assert.equal(run.code, 7, `${format}: ${run.stdout}${run.stderr}`);
        expect(jsonOut(run), `offline, ${format}`);
      }
    });
  });
}
