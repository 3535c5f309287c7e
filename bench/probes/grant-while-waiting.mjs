// Probe (not a scenario): what a grant request costs on SQLite while a bulk load's observations wait in the recent
// level, through the code of a given checkout, so two versions can be compared. It ingests WAITING observations in
// batches of 5,000 (below the merge threshold, so they wait) into a fresh store, then times GRANTS single-grant
// requests (upsertGrants), each after another batch, and one read of a graph page after them. Before migration 16 a
// grant folded everything waiting first; since, it waits behind the rows. docs/accessmap.md "The recent level".
// Run: node bench/probes/grant-while-waiting.mjs [checkout=.] [waiting=200000] [grants=5]
import { resolve, join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { randomUUID } from 'node:crypto';

const [checkout = '.', waitingArg = '200000', grantsArg = '5'] = process.argv.slice(2);
const WAITING = Number(waitingArg), GRANTS = Number(grantsArg), BATCH = 5_000;
const root = resolve(checkout);
const load = (p) => import(`${root}/dist/src/${p}`);
const { openStore } = await load('store/store.js');
const { ingestObservations, upsertGrants } = await load('modules/accessmap/edge-store.js');
const { listEdges } = await load('modules/accessmap/edge-query.js');

const dir = mkdtempSync(join(tmpdir(), 'svc-grant-probe-'));
const store = await openStore({ backend: 'sqlite', dataDir: dir, sqliteCacheMib: 2048 });
try {
  await store.migrate();
  const tenant = randomUUID();
  const now = new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z');
  await store.transaction((tx) => tx.insertInto('tenants').values({ id: tenant, name: 'probe', region: 'eu', status: 'active', created_at: now, deleted_at: null }).execute());
  let n = 0;
  const batch = () => Array.from({ length: BATCH }, () => {
    const i = n++;
    return { origin: { kind: 'identity', ref: `ident-${i % 5_000}` }, resource: { ref: `res-${i}` }, mode: 'r', confidence: 'high', signal_source: 'probe' };
  });
  while (n < WAITING) await ingestObservations(store, tenant, batch());
  const ms = [];
  for (let g = 0; g < GRANTS; g++) {
    await ingestObservations(store, tenant, batch());
    const t0 = performance.now();
    await upsertGrants(store, tenant, [{ origin: { kind: 'identity', ref: `ident-${g}` }, resource: { ref: `granted-${g}` }, mode: 'rw', source: 'iam' }]);
    ms.push(performance.now() - t0);
  }
  const t0 = performance.now();
  const page = await listEdges(store, tenant, { limit: 100 });
  const readMs = performance.now() - t0;
  console.log(JSON.stringify({ checkout: root, waiting_before_each_grant: `${WAITING.toLocaleString('en-US')}+`, grant_ms: ms.map((x) => Number(x.toFixed(1))), first_read_ms: Number(readMs.toFixed(1)), page_items: page.items.length }));
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
