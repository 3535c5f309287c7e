/**
 * The ledger forwarder's read + encode (`ledgerItems`, the lane's code) on both backends: for hostile
 * values (U+0001, controls, lone surrogates, multi-byte text), erased meta and payload hashes, every
 * line equals the reference path's (readRange, then the connector's `encodeRecord`) in every format a
 * syslog or notification connector forwards; a missing record fails the batch. Then the same range
 * through the syslog kind into a real rsyslogd over TLS: the bytes it received are the reference
 * lines, and `svc audit verify --file` verifies them with the signer's key.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { ledgerItems } from '../../../src/core/connectors/ledger-items.js';
import { syslogKind } from '../../../src/core/connectors/kinds/syslog.js';
import type { SinkItem } from '../../../src/core/connectors/kinds/types.js';
import { ledgerDevice } from '../../../src/encoders/ledger-fields.js';
import { encoderFor, type Surface } from '../../../src/encoders/registry.js';
import { sealBatch } from '../../../src/ledger/chain.js';
import { insertRecords, readRange } from '../../../src/ledger/ledger-store.js';
import type { AuditDraft, AuditRecord } from '../../../src/ledger/record.js';
import { runSvc } from '../../cli/harness.js';
import { rsyslogMissing, startRsyslog, type Rsyslog } from '../../helpers/rsyslog.js';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { newSigner, TENANT } from '../../ledger/fixtures.js';

const N = 120;
const OPTS = { device: ledgerDevice('0.1.0') };
const FORMATS: Array<[Surface, string]> = [
  ['syslog_connector', 'syslog'],
  ['syslog_connector', 'cef'],
  ['syslog_connector', 'leef'],
  ['notification', 'cef'],
  ['notification', 'leef'],
  ['notification', 'json'],
];
// No NUL (Postgres text cannot hold it) and no lone surrogate (SQLite stores U+FFFD: the record would not verify).
const HOSTILE = ['\u0001', 'a\u0001b', '\u0002', '\r\n', '\u0003', '%25', '\\', '|', '=', '"]', '😀', '\u2028', '\x7f', 'é\t'];
// A line under 1,000 UTF-16 units but over 1,000 UTF-8 octets: its octet count has one digit more than its length.
const WIDE = '€'.repeat(150);

function draftAt(seq: number): AuditDraft {
  const h = HOSTILE[seq % HOSTILE.length] as string;
  if (seq % 4 === 1)
    return { actor: 'user:u1', actor_kind: 'user', action: 'agent.create', target_kind: 'agent', target_id: `a-${seq}`, meta: { n: seq } };
  const where = seq % 5;
  return {
    actor: where === 0 ? `user:${h}` : 'user:u2',
    actor_kind: where === 1 ? h : 'user',
    action: where === 2 ? `agent.${h}` : 'agent.update',
    target_kind: where === 3 ? h : 'agent',
    target_id: where === 4 ? h : `t-${seq}`,
    meta: { n: seq, note: h, ...(seq % 7 === 0 ? { wide: WIDE } : {}) },
    ...(seq % 3 === 0 ? { payload_hash: 'e3'.repeat(32) } : {}),
  };
}

/** The reference path: the records as readRange serves them, each through `encodeRecord`. */
async function reference(ts: TestStore, tenant: string, from: number, to: number, surface: Surface, token: string): Promise<SinkItem[]> {
  const enc = encoderFor(surface, token);
  const records = await ts.store.withTenant(tenant, (tx) => readRange(tx, tenant, from, to));
  return records.map((r) => ({ line: enc.encodeRecord(r, OPTS), id: `${tenant}:${r.seq}`, tenant, seq: r.seq, time: r.occurred_at }));
}

for (const b of await testStores()) {
  describe(`${b.backend}: the forwarder's read + encode`, { skip: b.skip }, () => {
    let ts: TestStore;
    const signer = newSigner('ed25519');
    const GAPPY = '01970c2e-4b1a-7c3d-8e4f-000000000077';

    before(async () => {
      ts = await b.create();
      await ts.store.migrate();
      const sealed = sealBatch(null, TENANT, Array.from({ length: N }, (_, i) => draftAt(i + 1)), signer);
      await ts.store.withTenant(TENANT, (tx) => insertRecords(tx, TENANT, sealed, null));
      const gappy = sealBatch(null, GAPPY, Array.from({ length: 20 }, (_, i) => draftAt(i + 1)), signer);
      await ts.store.withTenant(GAPPY, (tx) => insertRecords(tx, GAPPY, gappy, null));
      // Erase the meta of seq 10 (blind destroyed, commitment kept) and delete seq 12 of the other chain: owner SQL.
      const commitment = (sealed[9] as AuditRecord).meta_commitment;
      if (ts.backend === 'sqlite') {
        const pos = (seq: number) => `(((select chain from audit_heads where tenant_id = ?) << 40) | ${seq})`;
        await ts.admin.query('drop trigger audit_records_no_update');
        await ts.admin.query('drop trigger audit_records_no_delete');
        await ts.admin.query(
          `update audit_records set meta = null, meta_blind = null, meta_commitment = x'${commitment}' where pos = ${pos(10)}`,
          [TENANT],
        );
        await ts.admin.query(`delete from audit_records where pos = ${pos(12)}`, [GAPPY]);
      } else {
        await ts.admin.query('alter table audit_records disable trigger user');
        await ts.admin.query(
          `update audit_records set meta = null, meta_blind = null, meta_commitment = decode('${commitment}', 'hex') ` +
            'where tenant_id = $1 and seq = 10',
          [TENANT],
        );
        await ts.admin.query('delete from audit_records where tenant_id = $1 and seq = 12', [GAPPY]);
        await ts.admin.query('alter table audit_records enable trigger user');
      }
    });
    after(async () => {
      await ts?.dispose();
    });

    it('gives the reference lines in every forwarded format, for whole, inner and skipped ranges', async () => {
      for (const [surface, token] of FORMATS) {
        const enc = encoderFor(surface, token);
        for (const [from, to] of [
          [1, N],
          [9, 11],
          [37, 100],
        ] as const) {
          const got = await ledgerItems(ts.store, TENANT, from, to, new Set(), enc, OPTS);
          assert.deepEqual(got, await reference(ts, TENANT, from, to, surface, token), `${surface}/${token} ${from}..${to}`);
        }
        const skipped = await ledgerItems(ts.store, TENANT, 1, 20, new Set([2, 10, 20]), enc, OPTS);
        const want = (await reference(ts, TENANT, 1, 20, surface, token)).filter((i) => ![2, 10, 20].includes(i.seq as number));
        assert.deepEqual(skipped, want, `${surface}/${token} with skips`);
      }
      const erased = await ledgerItems(ts.store, TENANT, 10, 10, new Set(), encoderFor('syslog_connector', 'syslog'), OPTS);
      assert.match(erased[0]?.line ?? '', /meta_erased="/);
    });

    it('fails a batch with a missing record instead of sending around the gap', async () => {
      const enc = encoderFor('syslog_connector', 'syslog');
      await assert.rejects(ledgerItems(ts.store, GAPPY, 10, 15, new Set(), enc, OPTS), /ledger range 10\.\.15 .* returned 5 records/);
      assert.equal((await ledgerItems(ts.store, GAPPY, 13, 20, new Set(), enc, OPTS)).length, 8);
    });

    describe('into rsyslog over TLS', { skip: rsyslogMissing() }, () => {
      let rs: Rsyslog;
      before(async () => {
        rs = await startRsyslog();
      });
      after(async () => {
        await rs?.close();
      });

      it('rsyslog receives exactly the reference bytes, and they verify with svc audit verify --file', { timeout: 60_000 }, async () => {
        const enc = encoderFor('syslog_connector', 'syslog');
        const kctx = { secret: async () => '', dataDir: rs.dir, version: '0.1.0', log: { warn: () => undefined, info: () => undefined } };
        const sink = await syslogKind.open({ host: '127.0.0.1', port: rs.tlsPort, ca_file: rs.caFile, server_name: 'localhost' }, kctx);
        try {
          for (const [from, to] of [
            [1, 50],
            [51, N],
          ] as const) {
            const res = await sink.send(await ledgerItems(ts.store, TENANT, from, to, new Set(), enc, OPTS), new AbortController().signal);
            assert.equal(res.result, 'delivered', res.error);
          }
        } finally {
          await sink.close();
        }
        await rs.waitFor(N);
        const lines = (await reference(ts, TENANT, 1, N, 'syslog_connector', 'syslog')).map((i) => i.line);
        const digits = (n: number) => String(n).length;
        assert.ok(
          lines.some((l) => digits(Buffer.byteLength(l)) > digits(l.length)),
          'a line whose octet count has more digits than its length is among them',
        );
        const want = lines.map((l) => l + '\n').join('');
        assert.equal(readFileSync(rs.rawFile, 'utf8'), want);
        const pub = signer.publicKey.export({ type: 'spki', format: 'der' }).subarray(-32).toString('base64');
        const run = await runSvc(
          ['audit', 'verify', '--file', rs.rawFile, '--format', 'syslog', '--tenant', TENANT, '--pubkey', `ed25519:${pub}`, '-o', 'json'],
          { timeoutMs: 60_000 },
        );
        assert.equal(run.code, 0, run.stdout + run.stderr);
        const report = JSON.parse(run.stdout);
        assert.equal(report.chain.ok ?? report.ok, true, run.stdout);
        assert.equal(report.signatures.ok ?? report.ok, true, run.stdout);
      });
    });
  });
}
