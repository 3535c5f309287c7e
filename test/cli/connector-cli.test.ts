/**
 * `svc connector set|ls|health|rm` the way users run them: the built binary against a real
 * `svc serve` over HTTPS (`-o json`). A filelog connector forwards the tenant's ledger and health
 * shows it caught up; a bad format is refused naming the accepted tokens; `rm` needs `-y` when stdin
 * is not a terminal; a connector whose secret was deleted makes `connector health` exit 7; `connector
 * redeliver` requeues a batch that went dead while the receiver was broken (exit 4 unknown, 5 not dead).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setupAndLogin, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { api, caughtUp, makeRecords, seqOf } from '../core/connectors/helpers.js';
import { jsonOut, runSvc } from './harness.js';

let server: TestServer;
let base: string[];
let tenant: string;

before(async () => {
  server = await startServer({ timeoutMs: 60_000 });
  const s = await setupAndLogin(server, { email: 'root@example.test', password: 'correct horse battery staple' });
  tenant = s.tenant;
  const caPath = join(tempDir('svc-conn-cli-'), 'ca.pem');
  writeFileSync(caPath, server.certPem as string);
  base = ['--server', server.url, '--ca-cert', caPath, '--token', s.token];
  await makeRecords(api(server, s.token, tenant), 10, 'cli');
});
after(async () => {
  await server?.stop();
});

async function health(name: string, pred: (h: any) => boolean): Promise<{ code: number | null; item: any }> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const run = await runSvc(['connector', 'health', name, ...base, '-o', 'json']);
    const item = run.code === 0 || run.code === 7 ? jsonOut(run).items[0] : undefined;
    if (item && pred(item)) return { code: run.code, item };
    if (Date.now() > deadline) throw new Error(`health of ${name}: ${run.code} ${run.stdout} ${run.stderr}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

test('set → ls → health (caught up, the file holds the ledger) → rm refused without -y → rm -y', { timeout: 120_000 }, async () => {
  const bad = await runSvc([
    'connector',
    'set',
    'file-cli',
    ...base,
    '--kind',
    'filelog',
    '--tenant',
    tenant,
    '--format',
    'xml',
    '--config',
    '{"path":"out/cli.cef"}',
    '-o',
    'json',
  ]);
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr + bad.stdout, /accepted: json, cef, leef, syslog, otlp, otlp_envelope, ocsf, asim/);

  const set = await runSvc([
    'connector',
    'set',
    'file-cli',
    ...base,
    '--kind',
    'filelog',
    '--tenant',
    tenant,
    '--format',
    'cef',
    '--config',
    '{"path":"out/cli.cef"}',
    '--initial-interval',
    '1',
    '-o',
    'json',
  ]);
  assert.equal(set.code, 0, set.stderr);
  const c = jsonOut(set);
  assert.equal(c.name, 'file-cli');
  assert.equal(c.kind, 'filelog');
  assert.equal(c.format, 'cef');
  assert.equal(c.tenant, tenant);
  assert.equal(c.enabled, true);

  const ls = await runSvc(['connector', 'ls', ...base, '-o', 'json']);
  assert.equal(ls.code, 0, ls.stderr);
  assert.ok(jsonOut(ls).items.some((i: any) => i.name === 'file-cli' && i.kind === 'filelog'));

  const { code, item } = await health('file-cli', caughtUp);
  assert.equal(code, 0);
  assert.equal(item.state, 'running');
  const head = item.lanes.find((l: any) => l.source === 'ledger').head_seq as number;
  const file = join(server.dataDir, 'out/cli.cef');
  const seqs = [...new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean).map(seqOf))].sort((a, b) => a - b);
  assert.deepEqual(seqs, Array.from({ length: head }, (_, i) => i + 1));

  const refused = await runSvc(['connector', 'rm', 'file-cli', ...base], { stdin: '' });
  assert.notEqual(refused.code, 0, 'rm without -y is refused when stdin is not a terminal');
  assert.match(refused.stderr, /-y/);
  assert.ok(jsonOut(await runSvc(['connector', 'ls', ...base, '-o', 'json'])).items.some((i: any) => i.name === 'file-cli'), 'still there');

  const rm = await runSvc(['connector', 'rm', 'file-cli', ...base, '-y', '-o', 'json']);
  assert.equal(rm.code, 0, rm.stderr);
  assert.deepEqual(jsonOut(rm), { name: 'file-cli', deleted: true });
  assert.ok(!jsonOut(await runSvc(['connector', 'ls', ...base, '-o', 'json'])).items.some((i: any) => i.name === 'file-cli'));
  assert.ok(existsSync(file), 'deleting a connector leaves what it delivered');
});

test('a deleted secret fails the connector closed and `connector health` exits 7', { timeout: 120_000 }, async () => {
  const dir = tempDir('svc-conn-cli-key-');
  const keyFile = join(dir, 'k.pem');
  writeFileSync(keyFile, '-----BEGIN PRIVATE KEY-----\nnot-a-real-key\n-----END PRIVATE KEY-----\n');
  const sec = await runSvc(['secrets', 'set', 'cli-key', ...base, '--value-file', keyFile]);
  assert.equal(sec.code, 0, sec.stderr);
  const set = await runSvc([
    'connector',
    'set',
    'sys-cli',
    ...base,
    '--kind',
    'syslog',
    '--tenant',
    tenant,
    '--config',
    JSON.stringify({ host: '127.0.0.1', port: 1, client_cert_file: keyFile, client_key: 'secret:cli-key' }),
    '-o',
    'json',
  ]);
  assert.equal(set.code, 0, set.stderr);
  // Give the connector's lane a moment to open its sink with the client key, then check the server lives.
  await new Promise((r) => setTimeout(r, 2000));
  const died = () =>
    `server exit ${server.child.exitCode} ${server.child.signalCode}; last logs: ${JSON.stringify(server.logs().slice(-4))}`;
  assert.equal(server.child.exitCode, null, died());
  const rmSecret = await runSvc(['secrets', 'rm', 'cli-key', ...base, '-y']);
  assert.equal(rmSecret.code, 0, rmSecret.stderr + died());
  const { code, item } = await health('sys-cli', (h) => h.state === 'failed');
  assert.equal(code, 7, 'health exits 7 when a connector failed');
  assert.match(String(item.reason), /cli-key/);
  const text = await runSvc(['connector', 'health', ...base]);
  assert.equal(text.code, 7);
  assert.match(text.stdout, /sys-cli\s+syslog\s+failed/);
  assert.ok(!text.stdout.includes('not-a-real-key'), 'the secret value never shows');
  assert.equal((await runSvc(['connector', 'rm', 'sys-cli', ...base, '-y'])).code, 0);
});

const REDELIVER = 'connector redeliver: a dead batch is requeued after the fix and arrives; exit 4 unknown, 5 not dead';
test(REDELIVER, { timeout: 120_000 }, async () => {
  // The receiver is broken: the file's directory is a regular file.
  mkdirSync(join(server.dataDir, 'out'), { recursive: true });
  const blocker = join(server.dataDir, 'out/cli-blocked');
  writeFileSync(blocker, 'not a directory\n');
  const set = await runSvc([
    'connector', 'set', 'file-dead', ...base, '--kind', 'filelog', '--tenant', tenant, '--format', 'cef',
    '--config', '{"path":"out/cli-blocked/ledger.cef"}', '--max-attempts', '2', '--initial-interval', '1', '-o', 'json',
  ]);
  assert.equal(set.code, 0, set.stderr);
  const dead = await health('file-dead', (h) => h.dead_letters >= 1 && h.queued === 0);
  assert.equal(dead.code, 0);

  const unknown = await runSvc(['connector', 'redeliver', 'nope', ...base, '-y', '-o', 'json']);
  assert.equal(unknown.code, 4, unknown.stderr);
  const refused = await runSvc(['connector', 'redeliver', 'file-dead', ...base], { stdin: '' });
  assert.notEqual(refused.code, 0, 'redelivering every dead batch needs -y when stdin is not a terminal');
  assert.match(refused.stderr, /-y/);

  rmSync(blocker);
  const run = await runSvc(['connector', 'redeliver', 'file-dead', ...base, '-y', '-o', 'json']);
  assert.equal(run.code, 0, run.stderr);
  const out = jsonOut(run);
  assert.equal(out.name, 'file-dead');
  // Every batch dead when health was read, and any that went dead since (the tenant's chain keeps growing).
  assert.ok(out.requeued.length >= dead.item.dead_letters, `${out.requeued.length} requeued, ${dead.item.dead_letters} dead before`);
  assert.ok(out.requeued.every((d: any) => d.status === 'queued' && d.attempts === 0 && d.from_seq >= 1));
  const { item } = await health('file-dead', (h) => h.dead_letters === 0 && caughtUp(h));
  const head = item.lanes.find((l: any) => l.source === 'ledger').head_seq as number;
  const file = join(server.dataDir, 'out/cli-blocked/ledger.cef');
  const seqs = [...new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean).map(seqOf))].sort((a, b) => a - b);
  assert.deepEqual(seqs, Array.from({ length: head }, (_, i) => i + 1), 'the redelivered batch arrived');

  const notDead = await runSvc(['connector', 'redeliver', 'file-dead', ...base, '--batch', out.requeued[0].id, '-o', 'json']);
  assert.equal(notDead.code, 5, notDead.stderr + notDead.stdout);
  assert.match(notDead.stderr, /only a dead batch can be redelivered/);
  const none = await runSvc(['connector', 'redeliver', 'file-dead', ...base, '-y']);
  assert.equal(none.code, 0, none.stderr);
  assert.match(none.stdout, /connector file-dead has no dead batch/);
  assert.equal((await runSvc(['connector', 'rm', 'file-dead', ...base, '-y'])).code, 0);
});
