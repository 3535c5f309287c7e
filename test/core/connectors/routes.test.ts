/**
 * Connector, source and health routes on both stores, against a real server: validation at
 * configuration time (kind, format token naming the accepted ones, unknown fields, secret references,
 * cleartext opt-out, wrong tenant), audit of every mutation, and a filelog connector forwarding the
 * ledger on each store (the runtime's lanes under Postgres row-level security too).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { serveBackends } from '../../helpers/serve-stores.js';
import { setupAndLogin } from '../../helpers/server.js';
import { api, caughtUp, makeRecords, seqOf, waitHealth } from './helpers.js';

for (const b of await serveBackends()) {
  test(`connector, source and health routes (${b.backend})`, { skip: b.skip, timeout: 120_000 }, async (t) => {
    const server = await b.start({ timeoutMs: 60_000 });
    t.after(() => server.stop());
    const { tenant, token } = await setupAndLogin(server, { email: 'root@example.test', password: 'correct horse battery staple' });
    const admin = api(server, token);
    const inTenant = api(server, token, tenant);

    await t.test('validation refuses bad input with a clear message, nothing stored', async () => {
      const base = { name: 'c1', kind: 'filelog', tenant, config: { path: 'out/c1.log' } };
      const cases: Array<[unknown, number, RegExp]> = [
        [
          { ...base, format: 'xml' },
          400,
          /format "xml" is not accepted for notification connector format; accepted: json, cef, leef, syslog, otlp, otlp_envelope, ocsf, asim/,
        ],
        [{ ...base, kind: 'syslog', format: 'json', config: { host: '127.0.0.1' } }, 400, /accepted: syslog, cef, leef/],
        [{ ...base, kind: 'nope' }, 400, /unknown connector kind "nope"; known: syslog, filelog/],
        [{ ...base, config: { path: 'x', colour: 'red' } }, 400, /config.*colour/],
        [{ ...base, surprise: 1 }, 400, /surprise/],
        [{ ...base, tenant: '0197aaaa-0000-7000-8000-000000000000' }, 404, /tenant not found/],
        [{ ...base, kind: 'syslog', config: { host: '127.0.0.1', transport: 'tcp' } }, 400, /allow_cleartext/],
        [
          { ...base, kind: 'syslog', config: { host: '127.0.0.1', transport: 'udp', allow_cleartext: true, port: 6514 } },
          400,
          /never downgraded/,
        ],
        [
          { ...base, kind: 'syslog', config: { host: '127.0.0.1', transport: 'tcp', allow_cleartext: true, ca_file: '/etc/ssl/ca.pem' } },
          400,
          /never downgraded/,
        ],
        [
          { ...base, kind: 'syslog', config: { host: '127.0.0.1', client_cert_file: '/c.pem', client_key: 'secret:nope' } },
          400,
          /secret:nope, which does not exist/,
        ],
        [
          { ...base, kind: 'syslog', config: { host: '127.0.0.1', client_cert_file: '/c.pem', client_key: '-----BEGIN PRIVATE KEY-----' } },
          400,
          /client_key/,
        ],
        [{ ...base, sources: { ledger: false } }, 400, /forwards the ledger, the system chain, events, or a mix/],
        [{ ...base, sources: { events: { types: ['no.such.type'] } } }, 400, /unknown event type "no.such.type"/],
        [
          { ...base, sources: { events: { types: ['agent.created', 'subscription.tested'] } } },
          400,
          /"subscription.tested" are not written to the event log/,
        ],
        [{ ...base, name: 'Bad Name' }, 400, /name/],
        [{ ...base, config: { path: 'a\u0000b' } }, 400, /config/],
        ['{"name": "c1", ', 400, /JSON|json/],
      ];
      for (const [body, status, re] of cases) {
        const r = await admin('PUT', '/v1/console/connectors', body);
        assert.equal(r.status, status, `${JSON.stringify(body)} → ${r.status} ${r.text}`);
        assert.match(r.json().error?.message ?? r.text, re);
        assert.equal(r.json().error !== undefined || r.json().code !== undefined, true, 'error envelope');
      }
      assert.deepEqual((await admin('GET', '/v1/console/connectors')).json().items, []);
      // Not for a tenant member without system:admin: the session token of the superadmin works; no token does not.
      const anon = await api(server, '')('GET', '/v1/console/connectors');
      assert.equal(anon.status, 401);
    });

    await t.test('a filelog connector forwards the whole ledger of its tenant, each line verbatim, mode 0600', async () => {
      await makeRecords(inTenant, 12, 'agent');
      const put = await admin('PUT', '/v1/console/connectors', {
        name: 'file-cef',
        kind: 'filelog',
        tenant,
        format: 'cef',
        config: { path: 'out/ledger.cef' },
        max_attempts: 3,
        initial_interval_s: 1,
      });
      assert.equal(put.status, 200, put.text);
      assert.equal(put.json().format, 'cef');
      assert.equal(put.json().tenant, tenant);
      const h = await waitHealth(admin, 'file-cef', caughtUp);
      assert.equal(h.state, 'running');
      assert.equal(h.dead_letters, 0);
      const lane = h.lanes.find((l: any) => l.source === 'ledger');
      const file = join(server.dataDir, 'out/ledger.cef');
      assert.ok(existsSync(file));
      assert.equal(statSync(file).mode & 0o777, 0o600);
      const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l !== '');
      const seqs = [...new Set(lines.map(seqOf))].sort((a, b) => a - b);
      assert.deepEqual(seqs, Array.from({ length: lane.head_seq }, (_, i) => i + 1), 'every seq from 1 to the head, no gap');
      assert.ok(lines.every((l) => l.startsWith('CEF:0|svc|control-plane|')));
      // The deliveries listing: one row per batch, delivered.
      const d = await admin('GET', '/v1/console/connectors?name=file-cef&deliveries=all');
      assert.equal(d.status, 200, d.text);
      const rows = d.json().deliveries as any[];
      assert.ok(
        rows.length >= 1 && rows.length < lane.head_seq,
        `batches, not one row per record (${rows.length} rows for ${lane.head_seq} records)`,
      );
      assert.ok(rows.every((r) => r.status === 'delivered' && r.source === 'ledger' && r.tenant === tenant));
      // Health summary and setup status read the real state.
      const hs = await admin('GET', '/v1/console/health-summary');
      assert.equal(hs.json().connectors.running, 1);
      const ss = await admin('GET', '/v1/console/setup-status');
      const step = (ss.json().steps ?? ss.json().items ?? []).find((s: any) => s.id === 'ledger_forwarded');
      assert.equal(step?.completed, true, JSON.stringify(ss.json()));
    });

    await t.test('PUT replaces by name (version grows), GET by name, unknown name 404, DELETE audited', async () => {
      const again = await admin('PUT', '/v1/console/connectors', {
        name: 'file-cef',
        kind: 'filelog',
        tenant,
        format: 'cef',
        config: { path: 'out/ledger.cef' },
        enabled: false,
      });
      assert.equal(again.status, 200, again.text);
      assert.equal(again.json().version, 2);
      assert.equal(again.json().enabled, false);
      const h = await waitHealth(admin, 'file-cef', (x) => x.state === 'disabled');
      assert.equal(h.reason, null);
      assert.equal((await admin('GET', '/v1/console/connectors?name=nope')).status, 404);
      assert.equal((await admin('GET', '/v1/connectors/health?name=nope')).status, 404);
      assert.equal((await admin('DELETE', '/v1/console/connectors?name=nope')).status, 404);
      assert.equal((await admin('DELETE', '/v1/console/connectors?name=file-cef')).status, 204);
      assert.deepEqual((await admin('GET', '/v1/console/connectors')).json().items, []);
      const sys = await admin('GET', '/v1/audit/system?limit=1000');
      const actions = (sys.json().items as any[]).map((r) => `${r.action}:${r.target_id}`);
      assert.ok(actions.includes('connector.put:file-cef'), actions.join(' '));
      assert.ok(actions.includes('connector.delete:file-cef'));
    });

    await t.test('sources roster: stored, validated, audited', async () => {
      const bad: Array<[unknown, number, RegExp]> = [
        [{ name: 's1', kind: 'kafka', tenant, config: { path: '/x' } }, 400, /unknown source kind "kafka"; known: jsonl, dir/],
        [{ name: 's1', kind: 'jsonl', tenant, config: { path: '/x', extra: true } }, 400, /extra/],
        [{ name: 's1', kind: 'jsonl', tenant: '0197aaaa-0000-7000-8000-000000000000', config: { path: '/x' } }, 404, /tenant not found/],
        [{ name: 's1', kind: 'jsonl', tenant, config: { path: '/x' }, poll_interval_s: 0 }, 400, /poll_interval_s/],
      ];
      for (const [body, status, re] of bad) {
        const r = await admin('PUT', '/v1/console/sources', body);
        assert.equal(r.status, status, r.text);
        assert.match(r.json().error?.message ?? r.text, re);
      }
      const ok = await admin('PUT', '/v1/console/sources', {
        name: 'edge-logs',
        kind: 'jsonl',
        tenant,
        config: { path: '/var/log/agent/access.jsonl' },
        poll_interval_s: 30,
      });
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.json().last_seen_at, null);
      assert.deepEqual(ok.json().counts, {});
      const list = await admin('GET', `/v1/console/sources?tenant=${tenant}`);
      assert.deepEqual(
        list.json().items.map((s: any) => [s.name, s.kind, s.poll_interval_s, s.enabled]),
        [['edge-logs', 'jsonl', 30, true]],
      );
      assert.equal((await admin('DELETE', '/v1/console/sources?name=edge-logs')).status, 204);
      assert.equal((await admin('DELETE', '/v1/console/sources?name=edge-logs')).status, 404);
      const sys = await admin('GET', '/v1/audit/system?limit=1000');
      const actions = (sys.json().items as any[]).map((r) => r.action);
      assert.ok(actions.includes('source.put') && actions.includes('source.delete'));
    });
  });
}
