// Probe (not a scenario): where the memory of a drained webhook backlog goes (docs/perf/eventing-memory.md). It queues
// BACKLOG deliveries (events × 100 subscriptions) in a SQLite store once, keeps that data dir as a template, then for each
// run copies it, starts the delivery engine against loopback receivers in a child process and samples
// process.memoryUsage() every 250 ms until every delivery arrived: peak and last of rss, heapTotal, heapUsed, external,
// arrayBuffers, and rss minus heapTotal minus external (SQLite's page cache and other native memory, roughly).
// Run (after `npx tsc -p tsconfig.json`): node [--heapsnapshot-signal=SIGUSR2] bench/probes/eventing-memory.mjs [backlog=200000]
// Env: SERVICE_SQLITE_CACHE_MIB as the service reads it; PROBE_TEMPLATE=<dir> to keep/reuse the queued data dir.
import { fork } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(new URL('../..', import.meta.url).pathname);
const load = (p) => import(`${root}/dist/src/${p}`);
const { EventBus } = await load('events/bus.js');
const { lastSeq } = await load('events/event-log.js');
const { queueMany } = await load('events/delivery/delivery-store.js');
const { eventCatalog } = await load('routes.js');
const { EventingRuntime } = await load('modules/eventing/runtime.js');
const { createSubscription } = await load('modules/eventing/subscription-store.js');
const { Sealer } = await load('secrets/sealing.js');
const { newId } = await load('store/ids.js');
const { nowTimestamp } = await load('ledger/time.js');
const { openStore } = await load('store/store.js');
const { sqliteCacheMibFromEnv } = await load('store/sqlite/sqlite-cache.js');
const pino = (await import('pino')).default;

process.env['SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS'] = 'true';
if (process.env['PROBE_V8_FLAGS']) (await import('node:v8')).setFlagsFromString(process.env['PROBE_V8_FLAGS']);
const BACKLOG = Number(process.argv[2] ?? 200_000);
const SUBS = 100;
const MiB = (b) => Math.round(b / 2 ** 20);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const sealer = new Sealer(Buffer.alloc(32, 7));
const bus = new EventBus({ catalog: eventCatalog() });
const cacheMib = sqliteCacheMibFromEnv();
const open = async (dir) => {
  const config = { backend: 'sqlite', dataDir: dir, ...(cacheMib !== undefined ? { sqliteCacheMib: cacheMib } : {}) };
  const store = await openStore(config, pino({ level: 'silent' }));
  await store.migrate();
  return store;
};

const rx = fork(join(root, 'dist/src/bench/eventing-receiver.js'), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
const pending = [];
rx.on('message', (m) => pending.shift()?.(m));
const port = await new Promise((r) => pending.push((m) => r(m.port)));
const ask = (m) => new Promise((r) => { pending.push(r); rx.send(m); });

/** Queues the backlog into `dir` (no engine running); the tenant id. */
async function prepare(dir) {
  const store = await open(dir);
  const tenant = newId();
  await store.transaction((tx) => tx.insertInto('tenants')
    .values({ id: tenant, name: 'probe', region: 'default', status: 'active', created_at: nowTimestamp(), deleted_at: null }).execute());
  const lanes = [];
  for (let i = 0; i < SUBS; i++) {
    const { subscription } = await store.withTenant(tenant, (tx) => createSubscription(tx, sealer, tenant, 'probe', {
      name: `s${i}`, event_types: ['agent.created'], endpoint: `http://127.0.0.1:${port}/s${i}`, sink_format: 'json', role: 'owner',
    }));
    lanes.push(subscription.id);
  }
  const events = Math.ceil(BACKLOG / SUBS);
  for (let i = 0; i < events; i += 200) {
    const n = Math.min(200, events - i);
    await store.withTenant(tenant, async (tx) => {
      const logged = await bus.record(tx, Array.from({ length: n }, (_, k) => ({
        type: 'agent.created', tenant, subject: `agent/${newId()}`,
        data: { id: newId(), name: `b${i + k}`, kind: 'agent', external_id: '', status: 'active' },
      })));
      await queueMany(tx, tenant, lanes.flatMap((laneId) => logged.map((event) => ({ laneId, event }))));
      await tx.updateTable('event_subscriptions').set({ cursor_seq: await lastSeq(tx, tenant) }).where('tenant_id', '=', tenant).execute();
    });
  }
  await store.close();
}

const template = process.env['PROBE_TEMPLATE'] ?? mkdtempSync(join(tmpdir(), 'evmem-tpl-'));
if (!existsSync(join(template, 'svc.db'))) {
  const t0 = Date.now();
  await prepare(template);
  console.log(`queued ${BACKLOG} deliveries in ${((Date.now() - t0) / 1000).toFixed(0)} s into ${template}`);
}
const dir = mkdtempSync(join(tmpdir(), 'evmem-run-'));
cpSync(template, dir, { recursive: true });
const store = await open(dir);
await store.transaction((tx) => tx.updateTable('event_subscriptions')
  .set((eb) => ({ endpoint: eb.fn('printf', [eb.val(`http://127.0.0.1:${port}/%s`), eb.ref('name')]) })).execute());
const total = Number((await store.transaction((tx) => tx.selectFrom('event_deliveries').select((eb) => eb.fn.countAll().as('n'))
  .where('status', '=', 'queued').executeTakeFirstOrThrow())).n);
await ask({ cmd: 'reset' });
await sleep(1000);
const keys = ['rss', 'heapTotal', 'heapUsed', 'external', 'arrayBuffers'];
const sample = () => {
  const m = process.memoryUsage();
  return { ...m, native: m.rss - m.heapTotal - m.external };
};
const idle = sample();
const peak = { ...idle };
const timer = setInterval(() => {
  const s = sample();
  for (const k of [...keys, 'native']) peak[k] = Math.max(peak[k], s[k]);
}, 250);
const rt = new EventingRuntime({ store, sealer, bus, log: pino({ level: 'warn' }), version: 'probe', pollMs: 1000 });
const t0 = performance.now();
await rt.start();
let n = 0;
let last = Date.now();
while ((n = (await ask({ cmd: 'hits' })).hits) < total) {
  if (Date.now() - last > 10_000) {
    const s = sample();
    console.log(`${n}/${total} rss +${MiB(s.rss - idle.rss)} heapUsed ${MiB(s.heapUsed)} heapTotal ${MiB(s.heapTotal)} ` +
      `external ${MiB(s.external)} native ${MiB(s.native)} (peak rss +${MiB(peak.rss - idle.rss)})`);
    last = Date.now();
  }
  await sleep(100);
}
const seconds = (performance.now() - t0) / 1000;
clearInterval(timer);
const end = sample();
await rt.close();
await store.close();
rx.kill();
rmSync(dir, { recursive: true, force: true });
console.log(`drained ${n} in ${seconds.toFixed(0)} s (${(n / seconds).toFixed(0)}/s), cache ${cacheMib ?? 'default'} MiB`);
console.log('MiB       idle   peak   end   peak-idle');
for (const k of [...keys, 'native'])
  console.log([k.padEnd(12), ...[idle[k], peak[k], end[k], peak[k] - idle[k]].map((v, i) => String(MiB(v)).padStart(i ? 6 : 5))].join(' '));
