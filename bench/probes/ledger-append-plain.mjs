// Probe (not a scenario): plain appends of 64 concurrent appenders on one chain, through the compiled code of any
// checkout, so two versions of the append path compare in one process shape without the rest of `bench ledger-append`
// (no raw sign rates, no event rounds). The pipeline, 2-thread pool and store as that scenario builds them; SQLite in a
// temporary directory, or a throwaway Postgres database on 127.0.0.1:5432 (KEEP=1 keeps it for EXPLAIN and statistics).
//   node bench/probes/ledger-append-plain.mjs <checkout> <sqlite|postgres> [seconds per run]
// Prints the appends/s of two runs after a 1-s warm-up. Alternate checkouts (A B B A) to compare them.
// docs/perf/module-kit-abba-and-the-append-path.md.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [checkout = '.', backend = 'sqlite', secs = '4'] = process.argv.slice(2);
if (backend !== 'sqlite' && backend !== 'postgres') {
  console.error('usage: node bench/probes/ledger-append-plain.mjs <checkout> <sqlite|postgres> [seconds]');
  process.exit(2);
}
const root = resolve(checkout);
const load = (p) => import(pathToFileURL(join(root, 'dist/src', p)).href);
const pg = createRequire(join(root, 'package.json'))('pg');
const { Keyring } = await load('ledger/keyring.js');
const { LedgerPipeline } = await load('ledger/pipeline.js');
const { openStore } = await load('store/store.js');
const { createWorkerPool } = await load('workers/pool.js');

const admin = 'postgres://postgres@127.0.0.1:5432/postgres';
const sqlAdmin = async (text) => {
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  try {
    await c.query(text);
  } finally {
    await c.end();
  }
};
const dataDir = mkdtempSync(join(tmpdir(), 'svc-append-probe-'));
const dbName = backend === 'postgres' ? `svc_append_probe_${Math.random().toString(16).slice(2, 10)}` : undefined;
if (dbName) await sqlAdmin(`create database ${dbName}`);
const store = await openStore({ backend, dataDir, ...(dbName ? { dsn: `postgres://postgres@127.0.0.1:5432/${dbName}` } : {}) });
await store.migrate();
const keyring = await Keyring.open({ dataDir, env: {} });
const pool = createWorkerPool({ threads: 2, signingKeys: [keyring.signingKey()] });
const pipeline = new LedgerPipeline({ store, signer: () => keyring.active, pool });
const TENANT = '0197aaaa-0000-7000-8000-000000000001';
let i = 0;
const draft = (n) => ({
  actor: 'user:0197aaaa-aaaa-7bbb-8ccc-ddddeeeeffff',
  actor_kind: 'user',
  action: 'agent.create',
  target_kind: 'agent',
  target_id: `0197aaaa-bbbb-7ccc-8ddd-${n.toString(16).padStart(12, '0')}`,
  meta: { name: `agent-${n}` },
});
async function drive(ms) {
  const end = performance.now() + ms;
  let count = 0;
  const appender = async () => {
    while (performance.now() < end) {
      await pipeline.append(TENANT, draft(i++));
      count++;
    }
  };
  await Promise.all(Array.from({ length: 64 }, appender));
  return count / (ms / 1000);
}
await drive(1000);
const rates = [];
for (let k = 0; k < 2; k++) rates.push(Math.round(await drive(Number(secs) * 1000)));
console.log(`${root} ${backend}${dbName ? ` (${dbName})` : ''}: ${rates.join(' / ')} appends/s`);
await pipeline.close();
await pool.close();
await store.close();
rmSync(dataDir, { recursive: true, force: true });
if (dbName && !process.env.KEEP) await sqlAdmin(`drop database ${dbName} with (force)`);
