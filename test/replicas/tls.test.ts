/**
 * One TLS certificate for the replicas behind one load balancer (issue 37, docs/scale-out.md):
 * each replica records its certificate's SHA-256 fingerprint in `serve_replicas`; a replica
 * starting with another certificate than the live replicas' refuses with exit 2 and says why,
 * unless SERVICE_TLS_ROLLING_CHANGE=1; one with the same certificate starts.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { issueSelfSigned } from '../../src/serve/tls-generate.js';
import { pgQuery } from '../helpers/pg.js';
import { runServeExpectingExit, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { deploy, replicaSkip, type Deployment } from './harness.js';

const skip = await replicaSkip();

describe('one TLS certificate for replicas', { skip }, () => {
  let dep: Deployment;
  let otherCert: string;
  let otherKey: string;
  const extra: TestServer[] = [];
  before(async () => {
    dep = await deploy(1);
    const tls = await issueSelfSigned({ sans: { dns: ['localhost'], ips: ['127.0.0.1'] } });
    otherCert = path.join(dep.dir, 'other.crt');
    otherKey = path.join(dep.dir, 'other.key');
    writeFileSync(otherCert, tls.certPem);
    writeFileSync(otherKey, tls.keyPem, { mode: 0o600 });
  });
  after(async () => {
    await Promise.all(extra.map((s) => s.stop('SIGKILL')));
    await dep?.stop();
  });

  const store = () => ['--store', 'postgres', '--dsn', dep.dsn];
  const args = (cert: string, key: string) =>
    ['--data-dir', tempDir(), '--listen', '127.0.0.1:0', '--grpc-listen', '127.0.0.1:0', ...store(), '--tls-cert', cert, '--tls-key', key];
  const registered = () =>
    pgQuery<{ id: string; tls_fingerprint: string }>(dep.dsn, 'select id, tls_fingerprint from serve_replicas order by id');

  test('another certificate than the live replica’s: exit 2, naming both fingerprints and the override', async () => {
    const refused = await runServeExpectingExit(args(otherCert, otherKey), { SERVICE_AUDIT_KEY_FILE: dep.keyFile }, 60_000);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /TLS certificate \(sha256 [0-9A-F:]{95}\) differs from the certificate live replicas serve/);
    assert.ok(refused.stderr.includes(String(dep.replicas[0]?.fingerprintSha256)), refused.stderr);
    assert.match(refused.stderr, /SERVICE_TLS_ROLLING_CHANGE=1/);
    assert.equal((await registered()).length, 1, 'the refused replica is not registered');
  });

  test('the same certificate: starts, and both replicas are registered with it', async () => {
    const second = await dep.start();
    const rows = await registered();
    assert.equal(rows.length, 2);
    assert.ok(rows.every((r) => r.tls_fingerprint === second.fingerprintSha256));
    // A clean stop deregisters.
    await second.stop('SIGTERM');
    assert.equal((await registered()).length, 1);
  });

  test('SERVICE_TLS_ROLLING_CHANGE=1: a replica with the new certificate starts (a rolling change)', async () => {
    const env = { SERVICE_AUDIT_KEY_FILE: dep.keyFile, SERVICE_SECRETS_KEY_FILE: dep.secretsKeyFile, SERVICE_TLS_ROLLING_CHANGE: '1' };
    const rolled = await startServer({ timeoutMs: 90_000, args: [...store(), '--tls-cert', otherCert, '--tls-key', otherKey], env });
    extra.push(rolled);
    assert.notEqual(rolled.fingerprintSha256, dep.replicas[0]?.fingerprintSha256);
    assert.ok(rolled.logs().some((l) => /SERVICE_TLS_ROLLING_CHANGE=1: starting with a TLS certificate/.test(String(l.msg))));
    assert.equal((await registered()).length, 2);
  });
});
