/**
 * Issue 32's remainders on both stores, against a real server and a real `filelog` receiver:
 * - redelivery: a batch that went `dead` while the receiver could not take it (its directory was a
 *   file) is requeued by `POST /v1/console/connectors/redeliver` once the receiver is fixed, arrives
 *   whole after the records delivered meanwhile, and health's dead letters drop to 0; unknown
 *   connector or batch 404, a batch that is not dead 409, a wrong body 400, all in the error
 *   envelope; the redelivery is audited on the system chain;
 * - the system chain: an all-tenants connector with `sources.system` forwards the system chain
 *   (logins, tokens, connector changes) in seq order under the system chain's id, row-level security
 *   untouched on Postgres, and what it wrote verifies with `svc audit verify --file`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { runSvc } from '../../cli/harness.js';
import { serveBackends } from '../../helpers/serve-stores.js';
import { call, setupAndLogin } from '../../helpers/server.js';
import { SYSTEM_TENANT } from '../../../src/ledger/record.js';
import { api, caughtUp, makeRecords, seqOf, waitHealth } from './helpers.js';

const ADMIN = { email: 'root@example.test', password: 'correct horse battery staple' };

function fileLines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter((l) => l !== '') : [];
}

for (const b of await serveBackends()) {
  const name = `dead connector batches are redelivered; the system chain is forwarded (${b.backend})`;
  test(name, { skip: b.skip, timeout: 180_000 }, async (t) => {
    const server = await b.start({ timeoutMs: 60_000 });
    t.after(() => server.stop());
    const { tenant, token } = await setupAndLogin(server, ADMIN);
    const admin = api(server, token);
    const inTenant = api(server, token, tenant);
    const keys = await inTenant('GET', '/v1/audit/pubkey');
    const k = keys.json().keys[0] as { algorithm: string; public_key: string };
    const pubkey = `${k.algorithm}:${k.public_key}`;

    await t.test('a batch dead while the receiver was broken is redelivered after the fix and arrives', async () => {
      await makeRecords(inTenant, 10, 'before');
      // The receiver is broken: the file's directory is a regular file, so every write fails (retried, then dead).
      mkdirSync(join(server.dataDir, 'out'), { recursive: true });
      const blocker = join(server.dataDir, 'out/blocked');
      writeFileSync(blocker, 'not a directory\n');
      const file = join(blocker, 'ledger.cef');
      const put = await admin('PUT', '/v1/console/connectors', {
        name: 'file-redeliver',
        kind: 'filelog',
        tenant,
        format: 'cef',
        config: { path: 'out/blocked/ledger.cef' },
        max_attempts: 2,
        initial_interval_s: 1,
      });
      assert.equal(put.status, 200, put.text);
      const dead = await waitHealth(admin, 'file-redeliver', (h) => h.dead_letters >= 1 && h.queued === 0);
      assert.match(dead.last_error, /filelog .*ledger\.cef: E/);
      const deadRows = (await admin('GET', '/v1/console/connectors?name=file-redeliver&deliveries=dead')).json().deliveries as any[];
      assert.equal(deadRows.length, dead.dead_letters);
      const deadHead = Math.max(...deadRows.map((d) => d.to_seq as number));
      assert.equal(Math.min(...deadRows.map((d) => d.from_seq as number)), 1);

      // Wrong requests: the error envelope, nothing requeued.
      const bad: Array<[unknown, number, RegExp]> = [
        [{ name: 'nope' }, 404, /connector not found/],
        [{ name: 'file-redeliver', batch_id: '0197aaaa-0000-7000-8000-000000000000' }, 404, /delivery batch not found/],
        [{ name: 'file-redeliver', batch_id: 'not-a-uuid' }, 400, /batch_id/],
        [{ name: 'file-redeliver', surprise: true }, 400, /surprise/],
        [{}, 400, /name/],
        ['{"name": ', 400, /JSON|json/],
      ];
      for (const [body, status, re] of bad) {
        const r = await admin('POST', '/v1/console/connectors/redeliver', body);
        assert.equal(r.status, status, `${JSON.stringify(body)} → ${r.status} ${r.text}`);
        assert.match(r.json().error.message, re);
      }
      assert.equal((await api(server, '')('POST', '/v1/console/connectors/redeliver', { name: 'file-redeliver' })).status, 401);
      assert.equal((await waitHealth(admin, 'file-redeliver', () => true)).dead_letters, dead.dead_letters, 'nothing requeued');

      // The fix; records written now are delivered while the old batch stays dead.
      rmSync(blocker);
      await makeRecords(inTenant, 3, 'after-fix');
      await waitHealth(admin, 'file-redeliver', (h) => caughtUp(h) && h.lanes[0].head_seq > deadHead);
      const meanwhile = fileLines(file).map(seqOf);
      assert.ok(meanwhile.length > 0 && meanwhile.every((s) => s > deadHead), `only the later records so far: ${meanwhile.join(',')}`);

      const delivered = (await admin('GET', '/v1/console/connectors?name=file-redeliver&deliveries=delivered')).json().deliveries as any[];
      const notDead = await admin('POST', '/v1/console/connectors/redeliver', { name: 'file-redeliver', batch_id: delivered[0].id });
      assert.equal(notDead.status, 409, notDead.text);
      assert.match(notDead.json().error.message, /only a dead batch can be redelivered; batch .* is delivered/);

      const r = await admin('POST', '/v1/console/connectors/redeliver', { name: 'file-redeliver' });
      assert.equal(r.status, 200, r.text);
      const requeued = r.json().requeued as any[];
      assert.deepEqual(
        requeued.map((d) => [d.id, d.from_seq, d.to_seq, d.tenant, d.source]).sort(),
        deadRows.map((d) => [d.id, d.from_seq, d.to_seq, d.tenant, d.source]).sort(),
        'the dead batches, with their seq ranges',
      );
      assert.ok(requeued.every((d) => d.status === 'queued' && d.attempts === 0));
      const h = await waitHealth(admin, 'file-redeliver', (x) => x.dead_letters === 0 && caughtUp(x));
      const head = h.lanes[0].head_seq as number;
      const seqs = fileLines(file).map(seqOf);
      assert.deepEqual([...new Set(seqs)].sort((a, b) => a - b), Array.from({ length: head }, (_, i) => i + 1), 'no gap left');
      // What the receiver saw: the later records first, then the redelivered range, each in seq order.
      const tail = seqs.slice(meanwhile.length);
      assert.deepEqual(seqs.slice(0, meanwhile.length), meanwhile);
      assert.deepEqual(tail, [...tail].sort((a, c) => a - c), 'the redelivered range arrives in seq order');
      assert.ok(tail.includes(1) && tail.includes(deadHead));

      // Again: nothing dead, nothing to do.
      const again = await admin('POST', '/v1/console/connectors/redeliver', { name: 'file-redeliver' });
      assert.equal(again.status, 200, again.text);
      assert.deepEqual(again.json().requeued, []);
      const sys = await admin('GET', '/v1/audit/system?action=connector.redeliver&limit=10');
      const recs = sys.json().items as any[];
      assert.equal(recs.length, 2, JSON.stringify(recs));
      assert.equal(recs[0].target_id, 'file-redeliver');
      assert.equal(JSON.parse(recs[0].meta).count, deadRows.length);
      assert.equal((await admin('DELETE', '/v1/console/connectors?name=file-redeliver')).status, 204);
    });

    await t.test('the system chain is forwarded in seq order and verifies', async () => {
      const refused = await admin('PUT', '/v1/console/connectors', {
        name: 'sys-file',
        kind: 'filelog',
        tenant,
        format: 'cef',
        config: { path: 'out/system.cef' },
        sources: { system: true },
      });
      assert.equal(refused.status, 400, refused.text);
      assert.match(refused.json().error.message, /only on an all-tenants connector/);

      const put = await admin('PUT', '/v1/console/connectors', {
        name: 'sys-file',
        kind: 'filelog',
        tenant: null,
        format: 'cef',
        config: { path: 'out/system.cef' },
        sources: { ledger: false, system: true },
        max_attempts: 5,
        initial_interval_s: 1,
      });
      assert.equal(put.status, 200, put.text);
      assert.deepEqual(put.json().sources, { ledger: false, system: true, events: null });
      // System records: a login and a token.
      const login = await call(server, 'POST', '/v1/auth/login', {
        body: JSON.stringify(ADMIN),
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(login.status, 200, login.text);
      const tok = await admin('POST', '/v1/tokens', { name: 'siem-visible', role: 'viewer', tenant });
      assert.equal(tok.status, 201, tok.text);
      const tokenId = tok.json().id as string;

      const h = await waitHealth(admin, 'sys-file', (x) => caughtUp(x) && x.lanes[0].head_seq >= 3);
      assert.equal(h.state, 'running');
      assert.deepEqual(
        h.lanes.map((l: any) => [l.tenant, l.source]),
        [[SYSTEM_TENANT, 'ledger']],
        'one lane, over the system chain',
      );
      const head = h.lanes[0].head_seq as number;
      const lines = fileLines(join(server.dataDir, 'out/system.cef'));
      const bySeq = new Map<number, string>();
      for (const l of lines) {
        const prev = bySeq.get(seqOf(l));
        if (prev !== undefined) assert.equal(l, prev, 'a duplicate is the same record');
        bySeq.set(seqOf(l), l);
      }
      const seqs = [...bySeq.keys()].sort((a, c) => a - c);
      assert.deepEqual(seqs, Array.from({ length: head }, (_, i) => i + 1), 'every system record from seq 1 to the head');
      const all = lines.join('\n');
      assert.match(all, /\|auth\.login\|/);
      assert.match(all, /\|token\.create\|/);
      assert.ok(all.includes(tokenId), 'the token creation names the token');
      assert.match(all, /\|connector\.put\|/);
      assert.doesNotMatch(all, /\|agent\.create\|/, 'no tenant record in the system lane');

      const out = join(server.dataDir, 'verify-system.cef');
      writeFileSync(out, seqs.map((s) => bySeq.get(s)).join('\n') + '\n');
      const run = await runSvc(
        ['audit', 'verify', '--file', out, '--format', 'cef', '--tenant', SYSTEM_TENANT, '--pubkey', pubkey, '-o', 'json'],
        { timeoutMs: 60_000 },
      );
      assert.equal(run.code, 0, run.stderr + run.stdout);
      const report = JSON.parse(run.stdout);
      assert.equal(report.chain?.ok ?? report.ok, true, run.stdout);
      assert.equal(report.signatures?.ok ?? report.ok, true, run.stdout);

      // The deliveries listing and the deletion reach the system lane too.
      const d = await admin('GET', '/v1/console/connectors?name=sys-file&deliveries=all');
      assert.ok((d.json().deliveries as any[]).every((x) => x.tenant === SYSTEM_TENANT && x.status === 'delivered'));
      assert.equal((await admin('DELETE', '/v1/console/connectors?name=sys-file')).status, 204);
      const again = await admin('PUT', '/v1/console/connectors', {
        name: 'sys-file',
        kind: 'filelog',
        tenant: null,
        format: 'cef',
        config: { path: 'out/system-2.cef' },
        sources: { ledger: false, system: true },
      });
      assert.equal(again.status, 200, again.text);
      const h2 = await waitHealth(admin, 'sys-file', (x) => caughtUp(x));
      assert.equal(fileLines(join(server.dataDir, 'out/system-2.cef')).map(seqOf)[0], 1, 'a new connector starts the chain from seq 1');
      assert.ok(h2.lanes[0].head_seq > head);
      assert.equal((await admin('DELETE', '/v1/console/connectors?name=sys-file')).status, 204);
    });
  });
}
