/**
 * kill -9 of one of three replicas under load (issue 37, docs/scale-out.md "Failure behaviour"):
 * creates go through all three replicas concurrently, one is killed mid-load; every create that was
 * acknowledged (201) is present, each with its audit record; the chain is gapless and verifies on
 * each surviving replica and offline with the one pinned key; the killed replica restarts on its
 * data directory, rejoins, and verifies too.
 */
import assert from 'node:assert/strict';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runSvc } from '../cli/harness.js';
import { tempDir, type TestServer } from '../helpers/server.js';
import { assertVerifiesEverywhere, chain, deploy, replicaSkip, rest, setup, type Deployment } from './harness.js';

const skip = await replicaSkip();
const PER_WORKER = 25;
const WORKERS_PER_REPLICA = 3;

describe('kill -9 of one of three replicas under load', { skip }, () => {
  let dep: Deployment;
  let session: string;
  let tenant: string;
  const victimDir = tempDir('svc-replica-victim-');
  before(async () => {
    // Rate limits off: this test is about durability under load, not admission.
    dep = await deploy(2, { env: { SERVICE_RATE_LIMIT_RPS: '0' } });
    await dep.start({ dataDir: victimDir });
    ({ session, tenant } = await setup(dep));
  });
  after(async () => {
    await dep?.stop();
    rmSync(victimDir, { recursive: true, force: true });
  });

  test('every acknowledged create survives; the chain verifies on the survivors, offline, and on the restarted replica', async () => {
    const victim = dep.replicas[2] as TestServer;
    const acknowledged: Array<{ id: string; external_id: string }> = [];
    const failed: string[] = [];
    let sent = 0;
    let killed: Promise<unknown> | undefined;
    const worker = async (server: TestServer, w: string) => {
      for (let i = 0; i < PER_WORKER; i++) {
        const name = `${w}-${i}`;
        sent++;
        // Kill once about a third of the load is out, while every worker still has requests in flight.
        if (killed === undefined && sent >= (PER_WORKER * WORKERS_PER_REPLICA * 3) / 3) killed = victim.stop('SIGKILL');
        try {
          const r = await rest(server, 'POST', '/v1/agents', { token: session, tenant, body: { name, external_id: name } });
          if (r.status === 201) acknowledged.push({ id: r.json().id, external_id: name });
          else failed.push(`${name}: ${r.status} ${r.text.slice(0, 200)}`);
        } catch (err) {
          // The killed replica's requests fail for their clients: not acknowledged.
          failed.push(`${name}: ${(err as Error).message}`);
          if (server === victim) return;
        }
      }
    };
    await Promise.all(dep.replicas.flatMap((r, ri) => Array.from({ length: WORKERS_PER_REPLICA }, (_, wi) => worker(r, `r${ri}w${wi}`))));
    assert.ok(killed, 'the replica was killed mid-load');
    assert.equal(await killed, null, 'killed by signal');
    assert.equal(victim.child.signalCode, 'SIGKILL');
    const survivors = dep.replicas.slice(0, 2);
    // The survivors acknowledged all their own creates; the victim's in-flight ones failed.
    assert.deepEqual(failed.filter((f) => !f.startsWith('r2')), [], 'a survivor refused a create');
    assert.ok(acknowledged.length >= 2 * WORKERS_PER_REPLICA * PER_WORKER, `acknowledged ${acknowledged.length}`);

    const assertAllPresent = async (server: TestServer) => {
      for (const a of acknowledged) {
        const got = await rest(server, 'GET', `/v1/agents/${a.id}`, { token: session, tenant });
        assert.equal(got.status, 200, `${a.external_id}: ${got.text}`);
        assert.equal(got.json().external_id, a.external_id);
      }
      const records = await chain(server, session, tenant);
      assert.deepEqual(records.map((r) => r.seq), Array.from({ length: records.length }, (_, i) => i + 1), 'gapless');
      const audited = new Set(records.filter((r) => r.action === 'agent.create').map((r) => r.target_id));
      assert.deepEqual(acknowledged.filter((a) => !audited.has(a.id)), [], 'every acknowledged create has its audit record');
      return records;
    };
    for (const s of survivors) await assertAllPresent(s);
    await assertVerifiesEverywhere(dep, session, tenant);

    // Offline, with the one key the deployment publishes.
    const spki = createPublicKey(createPrivateKey(readFileSync(dep.keyFile, 'utf8'))).export({ format: 'der', type: 'spki' });
    const pub = spki.subarray(-32).toString('base64');
    const published = (await rest(survivors[0] as TestServer, 'GET', '/v1/audit/pubkey', { token: session, tenant })).json();
    assert.deepEqual(published.keys.map((k: { public_key: string }) => k.public_key), [pub]);
    const exported = await rest(survivors[1] as TestServer, 'GET', '/v1/audit/export', { token: session, tenant });
    assert.equal(exported.status, 200, exported.text.slice(0, 300));
    const file = path.join(dep.dir, 'after-kill.ndjson');
    writeFileSync(file, exported.text);
    const verifyArgs = ['audit', 'verify', '--file', file, '--pubkey', `ed25519:${pub}`, '--strict', '-o', 'json'];
    const offline = await runSvc(verifyArgs, { timeoutMs: 60_000 });
    assert.equal(offline.code, 0, offline.stdout + offline.stderr);

    // The killed replica restarts on its data directory, rejoins, serves, and verifies.
    const back = await dep.start({ dataDir: victimDir });
    const body = { name: 'after-restart', external_id: 'after-restart' };
    const created = await rest(back, 'POST', '/v1/agents', { token: session, tenant, body });
    assert.equal(created.status, 201, created.text);
    acknowledged.push({ id: created.json().id, external_id: 'after-restart' });
    await assertAllPresent(back);
    await assertVerifiesEverywhere(dep, session, tenant);
  });
});
