/**
 * The syslog connector into a real Debian rsyslogd on loopback (test/helpers/rsyslog.ts): TLS with
 * octet counting (server certificate verified against its CA), cleartext TCP (octet counting, LF) and
 * UDP when opted out; every ledger record arrives intact, parsed by rsyslog as RFC 5424, and what
 * rsyslog wrote verifies with `svc audit verify --file` against the pinned key. A receiver with a
 * certificate from another CA gets nothing; an over-budget record is retried, dead-lettered and never
 * at rsyslog; a receiver down then back loses nothing and keeps the order; a deleted secret fails
 * the connector closed (health says why, /status degrades) until it is set again.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runSvc } from '../../cli/harness.js';
import { rsyslogMissing, startRsyslog, type Rsyslog } from '../../helpers/rsyslog.js';
import { call, setupAndLogin, startServer, type TestServer } from '../../helpers/server.js';
import { api, caughtUp, makeRecords, seqOf, waitHealth, type Api } from './helpers.js';

const skip = rsyslogMissing();
let rs: Rsyslog;
let server: TestServer;
let admin: Api;
let inTenant: Api;
let tenant: string;
let pubkey: string;

before(async () => {
  if (skip) return;
  rs = await startRsyslog();
  server = await startServer({ timeoutMs: 60_000 });
  const s = await setupAndLogin(server, { email: 'root@example.test', password: 'correct horse battery staple' });
  tenant = s.tenant;
  admin = api(server, s.token);
  inTenant = api(server, s.token, tenant);
  const keys = await inTenant('GET', '/v1/audit/pubkey');
  const k = keys.json().keys[0] as { algorithm: string; public_key: string };
  pubkey = `${k.algorithm}:${k.public_key}`;
  await makeRecords(inTenant, 40, 'agent');
});
after(async () => {
  await server?.stop();
  await rs?.close();
});

/** Records rsyslog wrote since `mark` (an index into its output). */
const since = (mark: number) => rs.received().slice(mark);

async function forward(
  name: string,
  config: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<{ head: number; got: ReturnType<typeof since> }> {
  const mark = rs.received().length;
  const put = await admin('PUT', '/v1/console/connectors', {
    name,
    kind: 'syslog',
    tenant,
    config,
    max_attempts: 3,
    initial_interval_s: 1,
    ...extra,
  });
  assert.equal(put.status, 200, put.text);
  const h = await waitHealth(admin, name, caughtUp);
  assert.equal(h.state, 'running', JSON.stringify(h));
  const head = h.lanes[0].head_seq as number;
  await rs.waitFor(mark + head);
  // Stop it so the next connector's records are told apart by arrival.
  assert.equal((await admin('DELETE', `/v1/console/connectors?name=${name}`)).status, 204);
  return { head, got: since(mark) };
}

function assertWhole(got: ReturnType<typeof since>, head: number): void {
  const seqs = [...new Set(got.map((r) => seqOf(r.raw)))].sort((a, b) => a - b);
  assert.deepEqual(seqs, Array.from({ length: head }, (_, i) => i + 1), 'every record from seq 1 to the head arrived');
  for (const r of got) {
    // rsyslog's RFC 5424 parser read every field: version 1, APP-NAME svc, MSGID audit, our SD-ID.
    assert.equal(r.version, '1', r.raw.slice(0, 120));
    assert.equal(r.app, 'svc');
    assert.equal(r.msgid, 'audit');
    assert.match(r.sd, /^\[svc@32473 wire_enc="pct-c0-v1" id="/);
  }
}

async function verifyLines(lines: string[]): Promise<any> {
  const file = join(rs.dir, `verify-${Date.now()}.syslog`);
  writeFileSync(file, lines.join('\n') + '\n');
  const run = await runSvc(
    ['audit', 'verify', '--file', file, '--format', 'syslog', '--tenant', tenant, '--pubkey', pubkey, '-o', 'json'],
    { timeoutMs: 60_000 },
  );
  assert.equal(run.code, 0, run.stderr);
  return JSON.parse(run.stdout);
}

test(
  'TLS on octet counting: every record intact and parsed; what rsyslog wrote verifies against the pinned key',
  { skip, timeout: 60_000 },
  async () => {
    const { head, got } = await forward('siem-tls', { host: '127.0.0.1', port: rs.tlsPort, ca_file: rs.caFile, server_name: 'localhost' });
    assertWhole(got, head);
    // Deduplicated by seq (at-least-once), in seq order: the chain rsyslog holds verifies.
    const bySeq = new Map(got.map((r) => [seqOf(r.raw), r.raw]));
    const report = await verifyLines([...bySeq.entries()].sort((a, b) => a[0] - b[0]).map(([, l]) => l));
    assert.equal(report.chain.ok ?? report.ok, true, JSON.stringify(report));
    assert.equal(report.signatures.ok ?? report.ok, true, JSON.stringify(report));
  },
);

test('pinned by SPKI sha256 instead of a CA file', { skip, timeout: 60_000 }, async () => {
  const { X509Certificate, createHash } = await import('node:crypto');
  const cert = new X509Certificate(readFileSync(join(rs.dir, 'cert.pem')));
  const pin = createHash('sha256').update(cert.publicKey.export({ type: 'spki', format: 'der' })).digest('base64');
  const { head, got } = await forward('siem-pin', { host: '127.0.0.1', port: rs.tlsPort, pin_sha256: pin });
  assertWhole(got, head);
});

test('cleartext TCP (octet counting and LF) and UDP, only by explicit opt-out', { skip, timeout: 90_000 }, async () => {
  const tcp = await forward('siem-tcp', { host: '127.0.0.1', port: rs.tcpPort, transport: 'tcp', allow_cleartext: true });
  assertWhole(tcp.got, tcp.head);
  const lf = await forward('siem-lf', { host: '127.0.0.1', port: rs.lfPort, transport: 'tcp', framing: 'lf', allow_cleartext: true });
  assertWhole(lf.got, lf.head);
  const udp = await forward('siem-udp', { host: '127.0.0.1', port: rs.udpPort, transport: 'udp', allow_cleartext: true });
  assertWhole(udp.got, udp.head);
});

test('a TLS receiver whose certificate does not chain to the configured CA gets nothing', { skip, timeout: 60_000 }, async () => {
  const mark = rs.received().length;
  const put = await admin('PUT', '/v1/console/connectors', {
    name: 'siem-wrong',
    kind: 'syslog',
    tenant,
    config: { host: '127.0.0.1', port: rs.tlsPort, ca_file: rs.wrongCaFile, server_name: 'localhost' },
    max_attempts: 3,
    initial_interval_s: 1,
  });
  assert.equal(put.status, 200, put.text);
  const h = await waitHealth(admin, 'siem-wrong', (x) => typeof x.last_error === 'string');
  assert.match(h.last_error, /certificate|self.signed|unable to verify/i);
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(rs.received().length, mark, 'rsyslog received nothing');
  // The test route reports the same refusal, and nothing arrives either.
  const t = await admin('POST', '/v1/console/connectors/test', { name: 'siem-wrong' });
  assert.equal(t.status, 200, t.text);
  assert.notEqual(t.json().result, 'delivered');
  assert.equal(rs.received().length, mark);
  assert.equal((await admin('DELETE', '/v1/console/connectors?name=siem-wrong')).status, 204);
});

test(
  'an over-budget record is retried, then dead-lettered, and never reaches rsyslog; the rest arrive',
  { skip, timeout: 90_000 },
  async (t) => {
    // Every record was received whole by the first tests: its exact size on the wire is known.
    const size = new Map(rs.received().map((r) => [seqOf(r.raw), Buffer.byteLength(r.raw, 'utf8')]));
    const budget = Math.max(...size.values()) - 1;
    const over = [...size.entries()]
      .filter(([, n]) => n > budget)
      .map(([s]) => s)
      .sort((a, b) => a - b);
    assert.ok(over.length >= 1 && over.length < size.size);
    const mark = rs.received().length;
    t.after(() => admin('DELETE', '/v1/console/connectors?name=siem-budget'));
    const put = await admin('PUT', '/v1/console/connectors', {
      name: 'siem-budget',
      kind: 'syslog',
      tenant,
      config: { host: '127.0.0.1', port: rs.tlsPort, ca_file: rs.caFile, server_name: 'localhost', max_payload_bytes: budget },
      max_attempts: 2,
      initial_interval_s: 1,
    });
    assert.equal(put.status, 200, put.text);
    const h = await waitHealth(
      admin,
      'siem-budget',
      (x) => x.dead_letters >= over.length && x.queued === 0 && x.lanes[0].delivered_seq >= x.lanes[0].head_seq,
      60_000,
    );
    const head = h.lanes[0].head_seq as number;
    const dead = (await admin('GET', '/v1/console/connectors?name=siem-budget&deliveries=dead')).json().deliveries as any[];
    const deadSeqs = dead.map((d) => d.from_seq as number).sort((a, b) => a - b);
    await rs.waitFor(mark + head - deadSeqs.length);
    const got = since(mark);
    const seqs = new Set(got.map((r) => seqOf(r.raw)));
    // Records seen whole before that are over the budget are exactly the dead ones among them (later records were never measured).
    assert.deepEqual(
      deadSeqs.filter((s) => size.has(s)),
      over,
      'each over-budget record is a dead delivery of its own',
    );
    for (const d of dead) {
      assert.equal(d.to_seq, d.from_seq);
      assert.equal(d.attempts, 2, 'retried before it went dead');
      const m = /is (\d+) octets, over max_payload_bytes (\d+)/.exec(d.last_error);
      assert.ok(m && Number(m[1]) > budget && Number(m[2]) === budget, d.last_error);
      if (size.has(d.from_seq)) assert.equal(Number(m?.[1]), size.get(d.from_seq), 'measured on the complete record in UTF-8 octets');
    }
    for (const s of deadSeqs) assert.equal(seqs.has(s), false, `over-budget seq ${s} never reached rsyslog`);
    for (let s = 1; s <= head; s++) if (!deadSeqs.includes(s)) assert.ok(seqs.has(s), `seq ${s} arrived`);
    assert.ok(
      got.every((r) => Buffer.byteLength(r.raw, 'utf8') <= budget),
      'nothing truncated into the budget either',
    );
  },
);

test('receiver down, then back on the same address: nothing lost, order kept', { skip, timeout: 120_000 }, async (t) => {
  t.after(() => admin('DELETE', '/v1/console/connectors?name=siem-outage'));
  const mark = rs.received().length;
  const put = await admin('PUT', '/v1/console/connectors', {
    name: 'siem-outage',
    kind: 'syslog',
    tenant,
    config: { host: '127.0.0.1', port: rs.tlsPort, ca_file: rs.caFile, server_name: 'localhost' },
    max_attempts: 20,
    initial_interval_s: 1,
  });
  assert.equal(put.status, 200, put.text);
  await waitHealth(admin, 'siem-outage', caughtUp);
  await rs.stop();
  await makeRecords(inTenant, 25, 'during-outage');
  const down = await waitHealth(admin, 'siem-outage', (x) => x.lag.records > 0 && typeof x.last_error === 'string');
  assert.ok(down.lag.records >= 25, JSON.stringify(down.lag));
  await rs.start();
  const h = await waitHealth(admin, 'siem-outage', caughtUp, 60_000);
  const head = h.lanes[0].head_seq as number;
  await rs.waitFor(mark + head);
  const seqs = since(mark).map((r) => seqOf(r.raw));
  assert.deepEqual([...new Set(seqs)].sort((a, b) => a - b), Array.from({ length: head }, (_, i) => i + 1), 'no gap after the outage');
  // Order: ascending, a retried batch may only repeat what came before it (at-least-once).
  let max = 0;
  for (const s of seqs) {
    assert.ok(s <= max + 1, `seq ${s} arrived before ${max + 1}`);
    max = Math.max(max, s);
  }
  assert.equal((await admin('DELETE', '/v1/console/connectors?name=siem-outage')).status, 204);
});

test(
  'a deleted secret fails the connector closed: nothing sent, health and /status say why, until it is set again',
  { skip, timeout: 120_000 },
  async (t) => {
    t.after(() => admin('DELETE', '/v1/console/connectors?name=siem-mtls'));
    assert.equal((await admin('PUT', '/v1/console/secrets', { name: 'syslog-client-key', value: rs.clientKeyPem })).status, 200);
    const cfg = {
      host: '127.0.0.1',
      port: rs.tlsPort,
      ca_file: rs.caFile,
      server_name: 'localhost',
      client_cert_file: rs.clientCertFile,
      client_key: 'secret:syslog-client-key',
    };
    const put = await admin('PUT', '/v1/console/connectors', {
      name: 'siem-mtls',
      kind: 'syslog',
      tenant,
      config: cfg,
      max_attempts: 5,
      initial_interval_s: 1,
    });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.json().secret_refs, ['secret:syslog-client-key']);
    assert.doesNotMatch(put.text, /BEGIN/);
    await waitHealth(admin, 'siem-mtls', caughtUp);
    const secrets = await admin('GET', '/v1/console/secrets');
    assert.deepEqual(secrets.json().items.find((s: any) => s.name === 'syslog-client-key').references, ['connector:siem-mtls']);
    assert.equal((await admin('DELETE', '/v1/console/secrets?name=syslog-client-key')).status, 204);
    await makeRecords(inTenant, 5, 'after-delete');
    const failed = await waitHealth(admin, 'siem-mtls', (x) => x.state === 'failed');
    assert.match(failed.reason, /secret "syslog-client-key" is referenced but does not exist/);
    const mark = rs.received().length;
    await new Promise((r) => setTimeout(r, 2500));
    assert.equal(rs.received().length, mark, 'nothing sent without the secret');
    assert.ok(failed.lag.records >= 5);
    const status = await call(server, 'GET', '/status');
    assert.equal(status.json().status, 'degraded');
    assert.equal(status.json().components.connectors.failed, 1);
    const st = await runSvc(['status', '--server', server.url, '--pin-sha256', server.pinSha256 as string]);
    assert.equal(st.code, 7, st.stdout + st.stderr);
    const summary = await admin('GET', '/v1/console/health-summary');
    assert.equal(summary.json().connectors.failed, 1);
    // Set again: it resumes from its cursor and catches up.
    assert.equal((await admin('PUT', '/v1/console/secrets', { name: 'syslog-client-key', value: rs.clientKeyPem })).status, 200);
    const back = await waitHealth(admin, 'siem-mtls', (x) => x.state === 'running' && caughtUp(x), 30_000);
    await rs.waitFor(mark + 5);
    assert.equal(back.reason, null);
    assert.equal((await call(server, 'GET', '/status')).json().status, 'ok');
    assert.equal((await admin('DELETE', '/v1/console/connectors?name=siem-mtls')).status, 204);
  },
);
