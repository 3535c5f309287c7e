/**
 * One secrets key for the replicas of a deployment (issue 48 item 10, docs/scale-out.md): a replica
 * whose secrets key cannot open the deployment's sealed values refuses to start (exit 2, naming
 * SERVICE_SECRETS_KEY_FILE), whether it was given another key file or none (its data directory's
 * own key); with the one key file, a subscription created through a replica that is gone is
 * delivered by the survivor. A database sealed before the check was recorded is checked against
 * its stored sealed values. And a single SQLite node restarted with another key refuses too.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pgQuery } from '../helpers/pg.js';
import { runServeExpectingExit, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { startReceiver, waitFor } from '../modules/eventing/harness.js';
import { deploy, replicaSkip, rest, setup, writeSecretsKey, type Deployment } from './harness.js';

const skip = await replicaSkip();

describe('one secrets key for the replicas', { skip, timeout: 60_000 }, () => {
  let dep: Deployment;
  let rx: Awaited<ReturnType<typeof startReceiver>>;
  before(async () => {
    rx = await startReceiver(() => 200);
    dep = await deploy(2, { env: { SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS: 'true' } });
  });
  after(async () => {
    await dep?.stop();
    await rx?.close();
  });

  const args = () => [
    '--data-dir', tempDir(), '--listen', '127.0.0.1:0', '--grpc-listen', '127.0.0.1:0',
    '--store', 'postgres', '--dsn', dep.dsn, '--tls-cert', dep.certFile, '--tls-key', dep.tlsKeyFile,
  ];
  const refusal = new RegExp(
    "startup failed: this replica's secrets key \\(key id [0-9a-f]{16}, from .+\\) does not open .+ sealed with key id [0-9a-f]{16}: " +
      'give every replica the same SERVICE_SECRETS_KEY_FILE',
  );

  test('another secrets key file, or none: exit 2 naming SERVICE_SECRETS_KEY_FILE; the replica is not registered', async () => {
    const other = writeSecretsKey(path.join(dep.dir, 'other-secrets.key'));
    const env = { SERVICE_AUDIT_KEY_FILE: dep.keyFile, SERVICE_RATE_LIMIT_RPS: '0' };
    const wrong = await runServeExpectingExit(args(), { ...env, SERVICE_SECRETS_KEY_FILE: other }, 45_000);
    assert.equal(wrong.code, 2, wrong.stderr);
    assert.match(wrong.stderr, refusal);
    assert.ok(wrong.stderr.includes(`from SERVICE_SECRETS_KEY_FILE=${other}`), wrong.stderr);
    // No key file: the data directory's own key, minted at start, opens nothing the deployment sealed.
    const none = await runServeExpectingExit(args(), { ...env, SERVICE_SECRETS_KEY_FILE: '' }, 45_000);
    assert.equal(none.code, 2, none.stderr);
    assert.match(none.stderr, /secrets\.key \(no SERVICE_SECRETS_KEY_FILE\)/);
    const live = await pgQuery<{ n: string }>(dep.dsn, 'select count(*) as n from serve_replicas');
    assert.equal(Number(live[0]?.n), 2, 'the refused replicas left no row');
  });

  test('with the one key file, a subscription created through a replica that is gone is delivered by the survivor', async () => {
    const [a, b] = dep.replicas as [TestServer, TestServer];
    const { session, tenant } = await setup(dep, a);
    const sub = await rest(a, 'POST', '/v1/m/eventing/subscriptions', {
      token: session,
      tenant,
      body: { name: 'survives', event_types: ['agent.created'], endpoint: rx.url('/survives'), sink_format: 'json', timeout_ms: 2000 },
    });
    assert.equal(sub.status, 201, sub.text);
    assert.equal(await a.stop('SIGKILL'), null);
    for (let i = 0; i < 3; i++) {
      const r = await rest(b, 'POST', '/v1/agents', { token: session, tenant, body: { name: `after-a-${i}` } });
      assert.equal(r.status, 201, r.text);
    }
    // B loads the lane at its next reload (5 s) and opens the secret A sealed.
    await waitFor(() => rx.delivered('/survives').length >= 3, 30_000, 'the survivor delivers');
    assert.ok(!b.logs().some((l) => /sealed secret does not open/.test(String(l.msg))));
  });

  test('a database sealed before the check was recorded: its stored sealed values decide', async () => {
    await pgQuery(dep.dsn, 'delete from secrets_key_check');
    const other = writeSecretsKey(path.join(dep.dir, 'third-secrets.key'));
    const env = { SERVICE_AUDIT_KEY_FILE: dep.keyFile, SERVICE_SECRETS_KEY_FILE: other, SERVICE_RATE_LIMIT_RPS: '0' };
    const wrong = await runServeExpectingExit(args(), env, 45_000);
    assert.equal(wrong.code, 2, wrong.stderr);
    assert.match(wrong.stderr, /does not open the sealed values stored in the database/);
    assert.equal((await pgQuery(dep.dsn, 'select 1 from secrets_key_check')).length, 0, 'the wrong key was not recorded');
  });
});

test('a single SQLite node restarted with another secrets key refuses to start', { timeout: 60_000 }, async () => {
  const dataDir = tempDir('svc-secrets-key-');
  const first = await startServer({ dataDir, timeoutMs: 45_000 });
  assert.equal(await first.stop('SIGTERM'), 0);
  const other = writeSecretsKey(path.join(tempDir('svc-secrets-other-'), 'secrets.key'));
  const again = await runServeExpectingExit(
    ['--data-dir', dataDir, '--listen', '127.0.0.1:0', '--grpc-listen', '127.0.0.1:0'],
    { SERVICE_SECRETS_KEY_FILE: other },
    45_000,
  );
  assert.equal(again.code, 2, again.stderr);
  assert.match(again.stderr, /give every replica the same SERVICE_SECRETS_KEY_FILE/);
  // Its own key still starts it.
  const back = await startServer({ dataDir, timeoutMs: 45_000 });
  await back.stop('SIGTERM');
});
