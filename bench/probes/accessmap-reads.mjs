// Probe (not a scenario): the access map's reads timed on estates `bench accessmap` kept, each through the code of its
// own checkout, so two versions' reads can be compared without the noise of the ingest that precedes a bench's reads.
// Build each estate with `SVC_BENCH_KEEP_SCRATCH=1 SVC_BENCH_ACCESSMAP_EDGES=1000000 npm run bench -- accessmap` in each
// checkout (the run prints the scratch directory it kept), then alternate:
//   node bench/probes/accessmap-reads.mjs <checkout A> <scratch A>
//   node bench/probes/accessmap-reads.mjs <checkout B> <scratch B>   (and again, A then B)
// Prints p50/p95 ms of neighbours of agents and of resources (direction both, 100), a graph page filtered by resource
// (100) and bounded reachability from an agent, the bench's own choices of nodes. docs/accessmap.md "Edges in store order".
import { resolve } from 'node:path';
import { createRequire } from 'node:module';

const [checkout = '.', dir] = process.argv.slice(2);
if (!dir) {
  console.error('usage: node bench/probes/accessmap-reads.mjs <checkout> <scratch directory of a kept accessmap estate>');
  process.exit(2);
}
const root = resolve(checkout);
const load = (p) => import(`${root}/dist/src/${p}`);
const { openStore } = await load('store/store.js');
const { neighbors } = await load('modules/accessmap/neighbors.js');
const { reachability, DEFAULT_BOUNDS } = await load('modules/accessmap/attack-paths.js');
const { storeGraphSource } = await load('modules/accessmap/graph-source.js');
const { listEdges } = await load('modules/accessmap/edge-query.js');
const Database = createRequire(`${root}/package.json`)('better-sqlite3');

const peek = new Database(`${dir}/svc.db`, { readonly: true });
const tenant = peek.prepare('select id from tenants limit 1').get().id;
const agents = peek.prepare('select id from agents where tenant_id = ? order by id').all(tenant).map((r) => r.id);
const resources = peek.prepare("select id from access_nodes where tenant_id = ? and kind = 'resource' order by id limit 20000").all(tenant).map((r) => r.id);
peek.close();

const store = await openStore({ backend: 'sqlite', dataDir: dir, sqliteCacheMib: 2048 });
const at = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
const time = async (n, f) => {
  const out = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await f(i);
    out.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return out;
};
for (let i = 0; i < 50; i++) await neighbors(store, tenant, { id: agents[i % agents.length], direction: 'both', limit: 100 });
const figures = {
  'neighbors(agent)': await time(600, (i) => neighbors(store, tenant, { id: agents[(i * 7919) % agents.length], direction: 'both', limit: 100 })),
  'neighbors(resource)': await time(600, (i) => neighbors(store, tenant, { id: resources[(i * 7919) % resources.length], direction: 'both', limit: 100 })),
  'graph?resource_id': await time(600, (i) => listEdges(store, tenant, { resource_id: resources[(i * 104729) % resources.length], limit: 100 })),
  reachability: await time(150, (i) => store.withTenant(tenant, (tx) => reachability(storeGraphSource(tx, tenant, store.sqlite?.handle(tx)), agents[(i * 104729) % agents.length], DEFAULT_BOUNDS))),
};
console.log(`${root}: ` + Object.entries(figures).map(([k, t]) => `${k} p50 ${at(t, 0.5).toFixed(2)} p95 ${at(t, 0.95).toFixed(2)}`).join(' | '));
await store.close();
