/**
 * Issue 6 "end to end": one core enforcing mutual TLS, collectors for two tenants tailing files
 * (with a rotation on the way): every line becomes an observation in the right tenant and is
 * accounted for by ingest.batch ledger records; a collector holding the other tenant's token is
 * refused; a client without a certificate fails the handshake.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { status } from '@grpc/grpc-js';
import { controlPlane, createOrg, issueToken, startCore, tlsCreds, unary, type Core } from '../grpc/harness.js';
import { edgesOf, ledgerBatches, line, makeClientPki, observed, startCollector, waitFor, type RunningCollector } from './harness.js';

describe('collectors → core with mutual TLS and tokens for two tenants', () => {
  const work = mkdtempSync(path.join(tmpdir(), 'svc-collector-e2e-'));
  const pki = makeClientPki(path.join(work, 'pki'), ['c1', 'c2', 'c3']);
  let core: Core;
  let orgB: string;
  let serverCa: string;
  const collectors: RunningCollector[] = [];

  before(async () => {
    core = await startCore({ args: ['--grpc-client-ca', pki.caFile] });
    orgB = await createOrg(core, 'Org B');
    serverCa = path.join(work, 'server-ca.pem');
    writeFileSync(serverCa, core.server.certPem as string);
  });
  after(async () => {
    for (const c of collectors) await c.stop('SIGKILL');
    await core?.server.stop();
    rmSync(work, { recursive: true, force: true });
  });

  test('a client without a certificate is rejected at the handshake; with one it is served', async () => {
    const bare = controlPlane(core);
    const r = await unary(bare, 'GetServerInfo', {});
    bare.close();
    assert.equal(!r.ok && r.error.code, status.UNAVAILABLE);
    const withCert = controlPlane(core, tlsCreds(core, { cert: readPem(pki.clients['c1']!.cert), key: readPem(pki.clients['c1']!.key) }));
    const ok = await unary(withCert, 'GetServerInfo', {});
    withCert.close();
    assert.ok(ok.ok, ok.ok ? '' : ok.error.details);
  });

  test('two collectors, two tenants: every line once, in its tenant, in the ledger; the wrong token is refused', async () => {
    const tokenA = await issueToken(core, core.tenant, 'admin');
    const tokenB = await issueToken(core, orgB, 'admin');
    const fileA = path.join(work, 'a.jsonl');
    const fileB = path.join(work, 'b.jsonl');
    const fileC = path.join(work, 'c.jsonl');
    for (const f of [fileA, fileB, fileC]) writeFileSync(f, '');
    const common = { grpcPort: core.server.grpcPort, caFile: serverCa };
    collectors.push(
      startCollector({
        ...common,
        dir: path.join(work, 'c1'),
        name: 'c1',
        token: tokenA,
        tenant: core.tenant,
        files: [fileA],
        client: pki.clients['c1'],
      }),
    );
    collectors.push(
      startCollector({ ...common, dir: path.join(work, 'c2'), name: 'c2', token: tokenB, files: [fileB], client: pki.clients['c2'] }),
    );
    // Means to write to tenant A, holds tenant B's token.
    collectors.push(
      startCollector({
        ...common,
        dir: path.join(work, 'c3'),
        name: 'c3',
        token: tokenB,
        tenant: core.tenant,
        files: [fileC],
        client: pki.clients['c3'],
      }),
    );
    assert.ok(
      await waitFor(async () => collectors.every((c) => c.logs().includes('collector running')), 30_000),
      'collectors did not start',
    );
    const N = 300;
    for (let i = 0; i < N; i++) {
      appendFileSync(fileA, line('c1', i));
      appendFileSync(fileB, line('c2', i));
      appendFileSync(fileC, line('c3', i));
      if (i === 150) {
        // logrotate-style rename + recreate while the collector follows the file; a few lines
        // land in the old file after the rename (a writer that has not reopened yet).
        assert.ok(await waitFor(async () => (await observed(core, core.tenant, 'c1')) >= 140, 30_000));
        renameSync(fileA, `${fileA}.1`);
        appendFileSync(`${fileA}.1`, line('c1', N));
        writeFileSync(fileA, '');
      }
      if (i % 50 === 0) await new Promise((r) => setTimeout(r, 30));
    }
    const done = await waitFor(
      async () => (await observed(core, core.tenant, 'c1')) >= N + 1 && (await observed(core, orgB, 'c2')) >= N,
      60_000,
    );
    assert.ok(
      done,
      `not all observations arrived: A=${await observed(core, core.tenant, 'c1')} ` +
        `B=${await observed(core, orgB, 'c2')}\n${collectors[0]?.logs().slice(-3000)}\n${collectors[1]?.logs().slice(-2000)}`,
    );
    assert.equal(await observed(core, core.tenant, 'c1'), N + 1);
    assert.equal(await observed(core, orgB, 'c2'), N);
    const a = await edgesOf(core, core.tenant, 'c1');
    assert.equal(a.length, 50, 'one edge per (resource, mode): 25 resources × r/rw');
    // Tenant separation, both ways, and nothing from the refused collector anywhere.
    assert.equal(await observed(core, orgB, 'c1'), 0);
    assert.equal(await observed(core, core.tenant, 'c2'), 0);
    assert.equal(await observed(core, core.tenant, 'c3'), 0);
    assert.equal(await observed(core, orgB, 'c3'), 0);
    assert.match(collectors[2]?.logs() ?? '', /"code":7/, 'c3 sees PERMISSION_DENIED');
    const la = await ledgerBatches(core, core.tenant, 'c1');
    const lb = await ledgerBatches(core, orgB, 'c2');
    assert.equal(la.accepted, N + 1);
    assert.equal(lb.accepted, N);
    assert.equal(new Set(la.ids).size, la.records, 'one ledger record per batch id');
    for (const t of [core.tenant, orgB]) {
      const v = await core.rest('GET', '/v1/audit/verify', { token: core.session, tenant: t });
      assert.equal(v.json().chain.ok, true, v.text);
      assert.equal(v.json().signatures.ok, true, v.text);
    }
    // SIGTERM drains: both exit 0 with an empty spool; the refused one keeps its batches spooled.
    for (const c of collectors.splice(0, 2)) {
      assert.equal(await c.stop('SIGTERM'), 0, c.logs().slice(-1500));
      assert.deepEqual(readdirSync(c.spoolDir).filter((n) => n.startsWith('seg-')), []);
    }
    const refused = collectors.splice(0, 1)[0] as RunningCollector;
    await refused.stop('SIGTERM');
    assert.ok(readdirSync(refused.spoolDir).some((n) => n.startsWith('seg-')), 'unacked batches stay spooled');
    assert.ok(existsSync(path.join(refused.spoolDir, 'state.json')));
  });
});

function readPem(file: string): string {
  return readFileSync(file, 'utf8');
}
