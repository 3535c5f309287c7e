/**
 * kill -9 of `svc serve` while the ledger forwarder runs (issue 32, "Faults"): a `filelog` connector
 * forwards one tenant's ledger in CEF while clients keep writing; the server is SIGKILLed at a random
 * moment mid-forwarding and restarted on the same data (SQLite file, or the same Postgres database and
 * data dir). Once the lane has caught up again:
 * - every line of the file is whole (no torn line from the kill) and carries a seq;
 * - deduplicated by seq, the file holds every record of the tenant from seq 1 to the head, no gap;
 * - a seq that appears twice (at-least-once: a batch written but not yet marked delivered) is the
 *   very same line both times;
 * - the deduplicated file verifies with `svc audit verify --file` against the tenant's pinned key.
 * A second connector forwards the system chain (`sources.system`) into its own file while a writer
 * reads the system chain over and over (each read appends an `audit.read` to it): after the restart that file too holds every
 * system record up to the head, no gap, duplicates identical, and verifies.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runSvc } from '../../cli/harness.js';
import { setupAndLogin, startServer, type StartOptions, type TestServer } from '../../helpers/server.js';
import { SYSTEM_TENANT } from '../../../src/ledger/record.js';
import { createTempDatabase, pgTestDsn, type TempDatabase } from '../../helpers/pg.js';
import { selectedBackends } from '../../helpers/stores.js';
import { api, caughtUp, makeRecords, seqOf, waitHealth, type Api } from './helpers.js';

const ADMIN = { email: 'root@example.test', password: 'correct horse battery staple' };
const FILE = 'out/ledger.cef';
const SYSTEM_FILE = 'out/system.cef';

function lines(server: TestServer, name = FILE): string[] {
  const file = path.join(server.dataDir, name);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n');
}

/** Writers append records while the forwarder runs; once the file holds forwarded lines, SIGKILL at a random moment. */
async function writeAndKill(server: TestServer, inTenant: Api, admin: Api): Promise<number> {
  let killed = false;
  let acked = 0;
  const worker = async (w: number): Promise<void> => {
    for (let i = 0; !killed; i++) {
      try {
        const r = await inTenant('POST', '/v1/agents', { name: `w${w}-${i}` });
        if (r.status !== 201) throw new Error(`agent create answered ${r.status}: ${r.text}`);
        acked++;
      } catch (err) {
        if (killed) return;
        throw err;
      }
    }
  };
  const trigger = (async () => {
    // Forwarding is under way: some lines written, writes acknowledged and still coming.
    const deadline = Date.now() + 60_000;
    while (lines(server).length < 50 || acked < 10) {
      if (Date.now() > deadline) throw new Error('the forwarder wrote nothing within 60 s');
      await new Promise((r) => setTimeout(r, 20));
    }
    await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 300)));
    killed = true;
    server.child.kill('SIGKILL');
  })();
  // System records meanwhile: each read of the system chain appends an audit.read to it.
  const reads = async (): Promise<void> => {
    while (!killed) {
      try {
        const r = await admin('GET', '/v1/audit/system?limit=1');
        if (r.status !== 200) throw new Error(`system chain read answered ${r.status}: ${r.text}`);
      } catch (err) {
        if (killed) return;
        throw err;
      }
    }
  };
  await Promise.all([trigger, reads(), ...Array.from({ length: 4 }, (_, w) => worker(w))]);
  await new Promise<void>((resolve) =>
    server.child.exitCode !== null || server.child.signalCode !== null ? resolve() : server.child.once('exit', () => resolve()),
  );
  assert.equal(server.child.signalCode, 'SIGKILL');
  return acked;
}

const backends = selectedBackends();
const pg = await pgTestDsn();
const cases: Array<{ backend: string; skip: string | undefined; args: (db: TempDatabase | undefined) => string[] }> = [];
if (backends.has('sqlite')) cases.push({ backend: 'sqlite', skip: undefined, args: () => [] });
if (backends.has('postgres'))
  cases.push({ backend: 'postgres', skip: pg.skip, args: (db) => ['--store', 'postgres', '--dsn', (db as TempDatabase).dsn] });

for (const c of cases) {
  describe(`${c.backend}: kill -9 of svc serve during ledger forwarding`, { skip: c.skip }, () => {
    test(
      'after the restart the file has every record up to the head, no gap, duplicates identical, and it verifies',
      { timeout: 240_000 },
      async (t) => {
        const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-fwd-kill-'));
        const db = c.backend === 'postgres' ? await createTempDatabase(pg.dsn as string) : undefined;
        t.after(async () => {
          rmSync(dataDir, { recursive: true, force: true });
          await db?.drop();
        });
        // The writers create agents as fast as the server answers: the per-principal rate limit is not under test.
        const opts: StartOptions = { dataDir, args: c.args(db), timeoutMs: 120_000, env: { SERVICE_RATE_LIMIT_RPS: '0' } };
        const first = await startServer(opts);
        let token: string;
        let tenant: string;
        let pubkey: string;
        let acked: number;
        try {
          ({ tenant, token } = await setupAndLogin(first, ADMIN));
          const admin = api(first, token);
          const inTenant = api(first, token, tenant);
          const keys = await inTenant('GET', '/v1/audit/pubkey');
          assert.equal(keys.status, 200, keys.text);
          const k = keys.json().keys[0] as { algorithm: string; public_key: string };
          pubkey = `${k.algorithm}:${k.public_key}`;
          // A backlog before the connector exists, so the first batches are large.
          await makeRecords(inTenant, 200, 'pre');
          const put = await admin('PUT', '/v1/console/connectors', {
            name: 'file-kill',
            kind: 'filelog',
            tenant,
            format: 'cef',
            config: { path: FILE },
            max_attempts: 20,
            initial_interval_s: 1,
          });
          assert.equal(put.status, 200, put.text);
          const sys = await admin('PUT', '/v1/console/connectors', {
            name: 'system-kill',
            kind: 'filelog',
            tenant: null,
            format: 'cef',
            config: { path: SYSTEM_FILE },
            sources: { ledger: false, system: true },
            max_attempts: 20,
            initial_interval_s: 1,
          });
          assert.equal(sys.status, 200, sys.text);
          acked = await writeAndKill(first, inTenant, admin);
        } finally {
          await first.stop('SIGKILL');
        }
        assert.ok(acked > 0, 'writes ran while forwarding');
        const beforeRestart = lines(first).filter((l) => l !== '').length;

        const second = await startServer(opts);
        try {
          const admin = api(second, token);
          // A batch claimed by the killed process is taken over when its lease (15 s) runs out.
          const h = await waitHealth(admin, 'file-kill', caughtUp, 120_000);
          assert.equal(h.state, 'running', JSON.stringify(h));
          assert.equal(h.dead_letters, 0, JSON.stringify(h));
          const head = (h.lanes as Array<{ source: string; head_seq: number }>).find((l) => l.source === 'ledger')!.head_seq;

          const all = lines(second);
          assert.equal(all[all.length - 1], '', 'the file ends with a complete line');
          const got = all.slice(0, -1);
          assert.ok(got.length >= beforeRestart, 'the restart appended to the file, never truncated it');
          const bySeq = new Map<number, string>();
          let dups = 0;
          for (const l of got) {
            assert.ok(l.startsWith('CEF:0|svc|control-plane|'), `a whole CEF line: ${l.slice(0, 120)}`);
            const seq = seqOf(l);
            const prev = bySeq.get(seq);
            if (prev !== undefined) {
              dups++;
              assert.equal(l, prev, `the duplicate of seq ${seq} is the same record, verbatim`);
            } else bySeq.set(seq, l);
          }
          const seqs = [...bySeq.keys()].sort((a, b) => a - b);
          assert.deepEqual(
            seqs,
            Array.from({ length: head }, (_, i) => i + 1),
            'every record from seq 1 to the head, no gap',
          );
          assert.ok(head >= 200 + acked, `the head (${head}) covers every acknowledged write (${200 + acked} records at least)`);
          t.diagnostic(`${c.backend}: head ${head}, ${beforeRestart} lines before the kill, ${dups} duplicates after the restart`);

          const file = path.join(dataDir, 'verify.cef');
          writeFileSync(file, seqs.map((s) => bySeq.get(s)).join('\n') + '\n');
          const run = await runSvc(
            ['audit', 'verify', '--file', file, '--format', 'cef', '--tenant', tenant, '--pubkey', pubkey, '-o', 'json'],
            { timeoutMs: 120_000 },
          );
          assert.equal(run.code, 0, run.stderr + run.stdout);
          const report = JSON.parse(run.stdout);
          assert.equal(report.chain?.ok ?? report.ok, true, run.stdout);
          assert.equal(report.signatures?.ok ?? report.ok, true, run.stdout);

          const hs = await waitHealth(admin, 'system-kill', caughtUp, 120_000);
          assert.deepEqual(hs.lanes.map((l: { tenant: string }) => l.tenant), [SYSTEM_TENANT]);
          const sysHead = hs.lanes[0].head_seq as number;
          const sysLines = lines(second, SYSTEM_FILE).filter((l) => l !== '');
          const sysBySeq = new Map<number, string>();
          for (const l of sysLines) {
            const prev = sysBySeq.get(seqOf(l));
            if (prev !== undefined) assert.equal(l, prev, 'a duplicate system record is the same line');
            sysBySeq.set(seqOf(l), l);
          }
          const sysSeqs = [...sysBySeq.keys()].sort((a, b) => a - b);
          assert.deepEqual(sysSeqs, Array.from({ length: sysHead }, (_, i) => i + 1), 'every system record up to the head, no gap');
          assert.ok(sysLines.filter((l) => l.includes('|audit.read|')).length >= 2, 'the system chain reads of the writer arrived');
          t.diagnostic(`${c.backend}: system chain head ${sysHead}, ${sysLines.length - sysHead} duplicates`);
          const sysFile = path.join(dataDir, 'verify-system.cef');
          writeFileSync(sysFile, sysSeqs.map((s) => sysBySeq.get(s)).join('\n') + '\n');
          const sysRun = await runSvc(
            ['audit', 'verify', '--file', sysFile, '--format', 'cef', '--tenant', SYSTEM_TENANT, '--pubkey', pubkey, '-o', 'json'],
            { timeoutMs: 120_000 },
          );
          assert.equal(sysRun.code, 0, sysRun.stderr + sysRun.stdout);
          const sysReport = JSON.parse(sysRun.stdout);
          assert.equal(sysReport.chain?.ok ?? sysReport.ok, true, sysRun.stdout);
          assert.equal(sysReport.signatures?.ok ?? sysReport.ok, true, sysRun.stdout);
        } finally {
          await second.stop();
        }
      },
    );
  });
}
