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
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runSvc } from '../../cli/harness.js';
import { setupAndLogin, startServer, type StartOptions, type TestServer } from '../../helpers/server.js';
import { createTempDatabase, pgTestDsn, type TempDatabase } from '../../helpers/pg.js';
import { selectedBackends } from '../../helpers/stores.js';
import { api, caughtUp, makeRecords, seqOf, waitHealth, type Api } from './helpers.js';

const ADMIN = { email: 'root@example.test', password: 'correct horse battery staple' };
const FILE = 'out/ledger.cef';

function lines(server: TestServer): string[] {
  const file = path.join(server.dataDir, FILE);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n');
}

/** Writers append records while the forwarder runs; once the file holds forwarded lines, SIGKILL at a random moment. */
async function writeAndKill(server: TestServer, inTenant: Api): Promise<number> {
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
    // Forwarding is under way: some lines written, writes still coming.
    const deadline = Date.now() + 60_000;
    while (lines(server).length < 50) {
      if (Date.now() > deadline) throw new Error('the forwarder wrote nothing within 60 s');
      await new Promise((r) => setTimeout(r, 20));
    }
    await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 300)));
    killed = true;
    server.child.kill('SIGKILL');
  })();
  await Promise.all([trigger, ...Array.from({ length: 4 }, (_, w) => worker(w))]);
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
          acked = await writeAndKill(first, inTenant);
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
        } finally {
          await second.stop();
        }
      },
    );
  });
}
