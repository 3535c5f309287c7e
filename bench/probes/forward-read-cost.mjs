// Probe (not a scenario): CPU per record of the ledger forwarder's read + encode of batches of 5,000 (syslog and cef),
// the reference path (readRange → AuditRecord objects → encodeRecord) against `ledgerItems` (the lane's code), alternating
// A B B A, with the GC time of each run (perf_hooks). docs/perf/forward-read-path.md.
// Run after `npm run build`: node bench/probes/forward-read-cost.mjs [records=50000] [reps=2]  (PATHS=ledgerItems,… picks the runs)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { ledgerItems } from '../../dist/src/core/connectors/ledger-items.js';
import { ledgerDevice } from '../../dist/src/encoders/ledger-fields.js';
import { encoderFor } from '../../dist/src/encoders/registry.js';
import { Keyring } from '../../dist/src/ledger/keyring.js';
import { readRange } from '../../dist/src/ledger/ledger-store.js';
import { openStore } from '../../dist/src/store/store.js';
import { createWorkerPool } from '../../dist/src/workers/pool.js';
import { generateChain } from '../../dist/bench/lib/ledger-chain.js';

const N = Number(process.argv[2] ?? 50_000);
const REPS = Number(process.argv[3] ?? 2);
const BATCH = 5000;
const TENANT = '01970c2e-4b1a-7c3d-8e4f-5a6b7c8d9e0f';
const ACTIONS = ['agent.create', 'agent.update', 'auth.login', 'token.revoke', 'policy.deny'];
const draftAt = (i) => ({
  actor: `user:u${i % 97}`,
  actor_kind: 'user',
  action: ACTIONS[i % ACTIONS.length],
  target_kind: 'agent',
  target_id: `agent-${i % 5003}`,
  meta: { i, name: `agent ${i}`, labels: ['prod'] },
});

const dataDir = mkdtempSync(join(tmpdir(), 'svc-fwd-probe-'));
const keyring = await Keyring.open({ dataDir, env: {} });
const pool = createWorkerPool({ threads: 2, signingKeys: [keyring.signingKey()] });
const gen = await openStore({ backend: 'sqlite', dataDir, sqliteSynchronous: 'normal' });
await gen.migrate();
await generateChain(gen, pool, keyring, TENANT, N, (seq) => draftAt(seq - 1));
await gen.close();
await pool.close();
const store = await openStore({ backend: 'sqlite', dataDir });

let gcMs = 0;
new PerformanceObserver((l) => l.getEntries().forEach((e) => (gcMs += e.duration))).observe({ entryTypes: ['gc'] });
const opts = { device: ledgerDevice('bench') };
const none = new Set();
const paths = {
  reference: async (enc, from, to) => {
    const recs = await store.withTenant(TENANT, (tx) => readRange(tx, TENANT, from, to));
    const item = (r) => ({ line: enc.encodeRecord(r, opts), id: `${TENANT}:${r.seq}`, tenant: TENANT, seq: r.seq, time: r.occurred_at });
    return recs.map(item);
  },
  ledgerItems: (enc, from, to) => ledgerItems(store, TENANT, from, to, none, enc, opts),
};
// Same bytes first: every line of both paths.
for (const [surface, token] of [['syslog_connector', 'syslog'], ['notification', 'cef']]) {
  const enc = encoderFor(surface, token);
  for (let from = 1; from <= N; from += BATCH) {
    const a = await paths.reference(enc, from, Math.min(N, from + BATCH - 1));
    const b = await paths.ledgerItems(enc, from, Math.min(N, from + BATCH - 1));
    if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`${token}: items differ in ${from}..`);
  }
}
async function run(name, surface, token) {
  const enc = encoderFor(surface, token);
  gcMs = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let bytes = 0;
  for (let from = 1; from <= N; from += BATCH) {
    for (const it of await paths[name](enc, from, Math.min(N, from + BATCH - 1))) bytes += it.line.length;
  }
  await new Promise((r) => setImmediate(r));
  const c = process.cpuUsage(c0);
  const wall = performance.now() - t0;
  const us = (x) => ((x * 1000) / N).toFixed(2);
  const cpu = us((c.user + c.system) / 1000);
  console.log(`${token.padEnd(6)} ${name.padEnd(11)} cpu ${cpu} µs/rec, wall ${us(wall)} µs/rec, gc ${us(gcMs)} µs/rec (${bytes} chars)`);
}
for (let rep = 0; rep < REPS; rep++)
  for (const [surface, token] of [['syslog_connector', 'syslog'], ['notification', 'cef']])
    for (const name of (process.env.PATHS ?? 'reference,ledgerItems,ledgerItems,reference').split(',')) await run(name, surface, token);
await store.close();
rmSync(dataDir, { recursive: true, force: true });
