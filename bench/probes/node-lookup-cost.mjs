// Probe (not a scenario): the cost of ingest's node lookup (`nodesById` in src/modules/accessmap/node-lookup.ts, the
// statement the service prepares) through each of the two indexes it has had: `(tenant_id, id)`, which then reads each
// node's row for its kind and number (before migration 15), and `(tenant_id, id, kind, no)`, which answers alone
// (migration 15). Batches of 7,000 random ids of the estate (a bench batch's resources, sessions and identities), warm
// cache, the two indexes alternated three times; milliseconds per batch, median of 50. docs/accessmap.md "Node lookups
// from the index". It rebuilds indexes of the estate it is given, so give it a scratch estate:
//   SVC_BENCH_KEEP_SCRATCH=1 SVC_BENCH_ACCESSMAP_EDGES=10000000 npm run bench -- accessmap   (prints the directory kept)
//   npm run build && node bench/probes/node-lookup-cost.mjs <that directory>
import Database from 'better-sqlite3';
import { LOOKUPS } from '../../dist/src/modules/accessmap/node-lookup.js';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node bench/probes/node-lookup-cost.mjs <scratch directory of a kept accessmap estate>');
  process.exit(2);
}
const db = new Database(`${dir}/svc.db`);
db.pragma('cache_size = -2097152');
const tenant = db.prepare('select id from tenants limit 1').get().id;
const ids = db.prepare('select id from access_nodes where tenant_id = ?').pluck().all(tenant);
const INDEXES = {
  'through (tenant_id, id), then the row': ['drop index if exists access_nodes_lookup', 'create index if not exists access_nodes_tenant_id_idx on access_nodes (tenant_id, id)'],
  'from (tenant_id, id, kind, no) alone': ['create index if not exists access_nodes_lookup on access_nodes (tenant_id, id, kind, no)', 'drop index if exists access_nodes_tenant_id_idx'],
};
let seed = 7;
const rnd = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
const batch = () => JSON.stringify(Array.from({ length: 7000 }, () => ids[Math.floor(rnd() * ids.length)]));
for (let round = 0; round < 3; round++) {
  for (const [name, ddl] of Object.entries(INDEXES)) {
    for (const s of ddl) db.exec(s);
    const lookup = db.prepare(LOOKUPS.nodesById);
    const plan = db.prepare(`explain query plan ${LOOKUPS.nodesById}`).all(tenant, '[]').map((r) => r.detail)[0];
    const ms = [];
    for (let i = 0; i < 60; i++) {
      const b = batch();
      const t0 = performance.now();
      lookup.all(tenant, b);
      ms.push(performance.now() - t0);
    }
    const warm = ms.slice(10).sort((a, b) => a - b);
    const median = warm[Math.floor(warm.length / 2)];
    console.log(`${name.padEnd(40)} ${median.toFixed(2).padStart(6)} ms per 7,000 (${((1000 * median) / 7000).toFixed(2)} µs a node)  plan: ${plan}`);
  }
}
db.close();
