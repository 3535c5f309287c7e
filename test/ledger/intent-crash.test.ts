/**
 * No committed change without its record, across crashes (ledger/audit-intent.ts): a process that
 * commits changes and then appends their records is SIGKILLed at random moments, again and again;
 * after the restart's recovery, every stored change has its own record or a recovery record naming
 * its request, no marker is left, and the chain verifies.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { RECOVERED_ACTION } from '../../src/ledger/audit-intent.js';
import { Keyring } from '../../src/ledger/keyring.js';
import { LedgerService } from '../../src/ledger/ledger-service.js';
import { readHead, readRange } from '../../src/ledger/ledger-store.js';
import { nowTimestamp } from '../../src/ledger/time.js';
import { verifyRecords } from '../../src/ledger/verify.js';
import { testStores } from '../helpers/stores.js';
import { TENANT } from './fixtures.js';

const FIXTURE = fileURLToPath(new URL('./intent-crash-fixture.js', import.meta.url));
const ROUNDS = 4;

/** Runs the fixture until it finished `min` requests, then SIGKILLs it a random few ms later. */
function runAndKill(args: string[], min: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FIXTURE, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let done = 0;
    let stderr = '';
    let killing = false;
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`fixture made no progress (${done}); stderr: ${stderr}`));
    }, 60_000);
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      done += d.split('\n').length - 1;
      if (!killing && done >= min) {
        killing = true;
        setTimeout(() => child.kill('SIGKILL'), Math.floor(Math.random() * 25));
      }
    });
    child.on('exit', (code, signal) => {
      clearTimeout(guard);
      if (signal !== 'SIGKILL') reject(new Error(`fixture exited on its own (${code}); stderr: ${stderr}`));
      else resolve(done);
    });
  });
}

for (const b of await testStores()) {
  describe(`${b.backend}: committed changes and their audit records across crashes`, { skip: b.skip }, () => {
    test(`SIGKILL ×${ROUNDS} between changes and records: after recovery every change is on record`, async (t) => {
      const ts = await b.create();
      t.after(() => ts.dispose());
      await ts.store.migrate();
      const now = nowTimestamp();
      await ts.store.transaction((tx) =>
        tx
          .insertInto('tenants')
          .values({ id: TENANT, name: 'crash', region: 'eu', status: 'active', created_at: now, deleted_at: null })
          .execute(),
      );
      const args = [ts.backend, ts.config.dataDir, ...(ts.config.dsn ? [ts.config.dsn] : [])];
      let recovered = 0;
      for (let round = 0; round < ROUNDS; round++) {
        await runAndKill(args, 200 + round * 50);
        // The restart: the killed process has no request in flight, so every marker is stale.
        const ledger = await LedgerService.open({
          store: ts.store,
          dataDir: ts.config.dataDir,
          threads: 0,
          checkpointIntervalMs: 0,
          env: {},
          intentRecovery: { intervalMs: 0, staleMs: 0 },
        });
        await ledger.close();
        const left = await ts.store.transaction((tx) => sql<{ n: number }>`select count(*) as n from audit_intents`.execute(tx));
        assert.equal(Number(left.rows[0]?.n), 0, `round ${round}: no marker outlives recovery`);
      }
      const records = await ts.store.withTenant(TENANT, (tx) => readRange(tx, TENANT, 1, 10_000_000));
      const agents = await ts.store.withTenant(TENANT, (tx) =>
        tx.selectFrom('agents').select(['id', 'name']).where('tenant_id', '=', TENANT).execute(),
      );
      const created = new Set(records.filter((r) => r.action === 'agent.create').map((r) => r.target_id));
      const recoveredRequests = new Set(records.filter((r) => r.action === RECOVERED_ACTION).map((r) => r.target_id));
      recovered = recoveredRequests.size;
      for (const a of agents)
        assert.ok(
          created.has(a.id) || recoveredRequests.has(a.name),
          `agent ${a.id} (request ${a.name}) has its record or a recovery record`,
        );
      for (const r of records.filter((x) => x.action === RECOVERED_ACTION)) {
        const meta = JSON.parse(r.meta as string) as { route: string; request_id: string; tenants: string[] };
        assert.equal(meta.route, 'POST /v1/agents');
        assert.deepEqual(meta.tenants, [TENANT]);
        assert.equal(r.actor, 'user:crash-test');
      }
      const head = await ts.store.withTenant(TENANT, (tx) => readHead(tx, TENANT));
      const keyring = await Keyring.open({ dataDir: ts.config.dataDir, env: {}, store: ts.store });
      assert.equal(verifyRecords(records, { keys: keyring.keySet(TENANT), head }).ok, true);
      assert.ok(agents.length >= ROUNDS * 200, `${agents.length} changes`);
      t.diagnostic(`${agents.length} changes, ${created.size} with their own record, ${recovered} recovered after a kill`);
    });
  });
}
