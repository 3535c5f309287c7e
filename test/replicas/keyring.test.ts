/**
 * One keyring for a deployment of replicas on one PostgreSQL database (issue 37 item 1): every
 * replica publishes the same keys and verifies the chain they all write; the chain verifies
 * offline with the one pinned key; a replica whose key is not the active one refuses to start
 * (exit 5, with the reason); rotation is one operation for the deployment, recorded once, after
 * which a replica still holding the old key refuses to sign, and one restarted with the new key
 * signs on; the chain verifies on every replica across the rotation.
 */
import assert from 'node:assert/strict';
import { createPublicKey, createPrivateKey } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runSvc, jsonOut } from '../cli/harness.js';
import { runServeExpectingExit, tempDir, type TestServer } from '../helpers/server.js';
import { assertVerifiesEverywhere, chain, deploy, replicaSkip, rest, setup, writeAuditKey, type Deployment } from './harness.js';

const skip = await replicaSkip();

describe('one keyring for replicas on one database', { skip }, () => {
  let dep: Deployment;
  let session: string;
  let tenant: string;
  const live = () => dep.replicas.filter((r) => r.child.exitCode === null && r.child.signalCode === null);

  before(async () => {
    dep = await deploy(2);
    ({ session, tenant } = await setup(dep));
  });
  after(async () => dep?.stop());

  const createAgents = async (n: number, targets: TestServer[], prefix: string) => {
    const res = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        rest(targets[i % targets.length] as TestServer, 'POST', '/v1/agents', {
          token: session,
          tenant,
          body: { name: `${prefix}-${i}`, external_id: `${prefix}-${i}` },
        }),
      ),
    );
    return res;
  };

  test('writes through both replicas: one key published by each, the chain verifies on each and offline with that one key', async () => {
    const res = await createAgents(20, dep.replicas, 'a');
    assert.deepEqual(res.filter((r) => r.status !== 201).map((r) => r.text), []);
    const published = await Promise.all(
      dep.replicas.map(async (r) => (await rest(r, 'GET', '/v1/audit/pubkey', { token: session, tenant })).json()),
    );
    assert.equal(published[0].keys.length, 1);
    assert.deepEqual(published[1], published[0], 'every replica publishes the same keys');
    const want = createPublicKey(createPrivateKey(readFileSync(dep.keyFile, 'utf8')))
      .export({ format: 'der', type: 'spki' })
      .subarray(-32)
      .toString('base64');
    assert.equal(published[0].keys[0].public_key, want, 'the key is the shared key file’s');
    await assertVerifiesEverywhere(dep, session, tenant);
    const records = await chain(dep.replicas[1] as TestServer, session, tenant);
    assert.deepEqual(records.map((r) => r.seq), Array.from({ length: records.length }, (_, i) => i + 1), 'gapless');
    const exported = await rest(dep.replicas[0] as TestServer, 'GET', '/v1/audit/export', { token: session, tenant });
    assert.equal(exported.status, 200, exported.text.slice(0, 300));
    const file = path.join(dep.dir, 'chain.ndjson');
    writeFileSync(file, exported.text);
    const offline = await runSvc(['audit', 'verify', '--file', file, '--pubkey', `ed25519:${want}`, '--strict', '-o', 'json'], {
      timeoutMs: 60_000,
    });
    assert.equal(offline.code, 0, offline.stdout + offline.stderr);
  });

  test('a replica given another key, or none, refuses to start: exit 5 and the reason', async () => {
    const other = writeAuditKey(path.join(dep.dir, 'other.pem'));
    const base = [
      '--data-dir',
      tempDir(),
      '--listen',
      '127.0.0.1:0',
      '--grpc-listen',
      '127.0.0.1:0',
      '--store',
      'postgres',
      '--dsn',
      dep.dsn,
      '--tls-cert',
      dep.certFile,
      '--tls-key',
      dep.tlsKeyFile,
    ];
    const wrong = await runServeExpectingExit(base, { SERVICE_AUDIT_KEY_FILE: other });
    assert.equal(wrong.code, 5, wrong.stderr);
    assert.match(wrong.stderr, /is not the deployment's active key/);
    const none = await runServeExpectingExit(['--data-dir', tempDir(), ...base.slice(2)], { SERVICE_AUDIT_KEY_FILE: '' });
    assert.equal(none.code, 5, none.stderr);
    assert.match(none.stderr, /give every replica the same key file/);
  });

  test(
    'rotation: recorded once for the deployment; the old key refuses to sign; a replica on the new key signs; every replica verifies',
    async () => {
      const next = writeAuditKey(path.join(dep.dir, 'audit-key-2.pem'));
      const run = await runSvc(
        ['keys', 'rotate', '--data-dir', tempDir(), '--store', 'postgres', '--dsn', dep.dsn, '--key-file', next, '--yes', '-o', 'json'],
        { env: { SERVICE_AUDIT_KEY_FILE: dep.keyFile }, timeoutMs: 60_000 },
      );
      assert.equal(run.code, 0, run.stdout + run.stderr);
      const rotated = jsonOut(run);
      const mine = rotated.chains.find((c: { tenant: string }) => c.tenant === tenant);
      assert.ok(mine, JSON.stringify(rotated));
      // Both replicas still hold the old key: they refuse to sign, and nothing lands past its range.
      const refused = await createAgents(2, dep.replicas, 'refused');
      for (const r of refused) assert.ok(r.status >= 500, `${r.status} ${r.text}`);
      // Restart one replica on the new key; the old one keeps refusing.
      const old = dep.replicas[0] as TestServer;
      await old.stop('SIGTERM');
      const fresh = await dep.start({ env: { SERVICE_AUDIT_KEY_FILE: next } });
      const ok = await createAgents(5, [fresh], 'after');
      assert.deepEqual(
        ok.filter((r) => r.status !== 201).map((r) => r.text),
        [],
      );
      const keys = await Promise.all(
        live().map(async (r) => (await rest(r, 'GET', '/v1/audit/pubkey', { token: session, tenant })).json().keys),
      );
      for (const k of keys) assert.deepEqual(k, keys[0], 'the same keys and ranges on every replica');
      assert.deepEqual(
        keys[0].map((k: { key_id: string; last_seq?: number }) => [k.key_id, k.last_seq]),
        [
          [rotated.old_key_id, mine.last_seq_old_key],
          [rotated.new_key_id, undefined],
        ],
      );
      const records = await chain(fresh, session, tenant);
      const rotates = records.filter((r) => r.action === 'audit.key.rotate');
      assert.equal(rotates.length, 1, 'the rotation is recorded once');
      assert.deepEqual(
        records.map((r) => r.seq),
        Array.from({ length: records.length }, (_, i) => i + 1),
        'gapless',
      );
      assert.ok(
        records.filter((r) => r.seq > mine.last_seq_old_key).every((r) => r.key_id === rotated.new_key_id),
        'nothing signed by the old key past its range',
      );
      await assertVerifiesEverywhere(dep, session, tenant);
    },
  );
});
