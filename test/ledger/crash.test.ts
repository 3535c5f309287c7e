/**
 * Crash safety (issue 4 item 8): a process appending through the real pipeline is SIGKILLed again
 * and again at random moments; after each kill, every append it acknowledged (printed only after
 * its promise resolved) must be stored with the acknowledged hash, and the whole chain must verify.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Keyring } from '../../src/ledger/keyring.js';
import { readHead, readRange } from '../../src/ledger/ledger-store.js';
import { verifyRecords } from '../../src/ledger/verify.js';
import { testStores } from '../helpers/stores.js';
import { TENANT } from './fixtures.js';

const FIXTURE = fileURLToPath(new URL('./crash-fixture.js', import.meta.url));
const ROUNDS = 4;

/** Run the fixture until it acknowledged at least `minAcks` appends plus a random extra delay, then SIGKILL it. */
function runAndKill(args: string[], minAcks: number): Promise<Map<number, string>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FIXTURE, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const acked = new Map<number, string>();
    let buf = '';
    let stderr = '';
    let killing = false;
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`fixture made no progress (acks ${acked.size}); stderr: ${stderr}`));
    }, 60_000);
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      buf += d;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        const [seq, hash] = line.split(' ');
        if (hash !== undefined) acked.set(Number(seq), hash);
      }
      if (!killing && acked.size >= minAcks) {
        killing = true;
        // Kill somewhere inside a batch's life: sealing, signing, committing or acknowledging.
        setTimeout(() => child.kill('SIGKILL'), Math.floor(Math.random() * 40));
      }
    });
    child.on('exit', (code, signal) => {
      clearTimeout(guard);
      if (signal !== 'SIGKILL') reject(new Error(`fixture exited on its own (${code}); stderr: ${stderr}`));
      else resolve(acked);
    });
  });
}

for (const b of await testStores()) {
  describe(`${b.backend}: crash safety of the append pipeline`, { skip: b.skip }, () => {
    test(`SIGKILL ×${ROUNDS} while appending: every acknowledged record survives and the chain verifies`, async (t) => {
      const ts = await b.create();
      t.after(() => ts.dispose());
      const args = [ts.backend, ts.config.dataDir, ...(ts.config.dsn ? [ts.config.dsn] : [])];
      const acked = new Map<number, string>();
      for (let round = 0; round < ROUNDS; round++) {
        for (const [seq, hash] of await runAndKill(args, 300 + round * 100)) acked.set(seq, hash);
      }
      await ts.store.migrate();
      const records = await ts.store.withTenant(TENANT, (tx) => readRange(tx, TENANT, 1, 10_000_000));
      const head = await ts.store.withTenant(TENANT, (tx) => readHead(tx, TENANT));
      assert.ok(acked.size >= ROUNDS * 300, `acknowledged ${acked.size}`);
      for (const [seq, hash] of acked) assert.equal(records[seq - 1]?.hash, hash, `acknowledged seq ${seq} is stored with its hash`);
      const keyring = await Keyring.open({ dataDir: ts.config.dataDir, env: {}, store: ts.store });
      const report = verifyRecords(records, { keys: keyring.keySet(TENANT), head });
      assert.equal(report.ok, true, JSON.stringify(report));
      assert.equal(head?.seq, records.length);
      assert.ok(report.checkpoints.count > 0);
    });
  });
}
