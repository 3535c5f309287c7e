// Probe (not a scenario): one merge of 250,000 recent-level rows into an access_edges of 1,000,000 (the schema of SQLite
// migrations 5 and 10, CHECKs off as the service merges), with the tenant foreign key and the resource index each taken
// away in turn; microseconds per merged row, commit included. docs/accessmap.md "Checked once".
// Run: node bench/probes/merge-row-cost.mjs   (a file in the temp dir, synchronous=FULL; a few minutes)
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import D from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
const HEX = '[0-9a-f]', Dg = '[0-9]';
const UG = `${HEX.repeat(8)}-${HEX.repeat(4)}-${HEX.repeat(4)}-${HEX.repeat(4)}-${HEX.repeat(12)}`;
const TG = `${Dg.repeat(4)}-${Dg.repeat(2)}-${Dg.repeat(2)}T${Dg.repeat(2)}:${Dg.repeat(2)}:${Dg.repeat(2)}.${Dg.repeat(9)}Z`;
const u = (c) => `${c} glob '${UG}'`, ts = (c) => `${c} glob '${TG}'`;
const N = 1_000_000, M = 250_000, NODES = 100_000;
const at = '2026-11-26T10:00:00.123456789Z';
function run(variant) {
  const f = join(tmpdir(), 'svc-merge-probe.db'); for (const x of ['', '-wal', '-shm']) rmSync(f + x, { force: true });
  const db = new D(f); db.pragma('journal_mode=WAL'); db.pragma('synchronous=FULL'); db.pragma('cache_size=-2000000'); db.pragma(`foreign_keys=${variant.fk ? 'ON' : 'OFF'}`);
  db.exec(`create table tenants (id text primary key) strict; create table agents (id text not null, tenant_id text not null, no integer, primary key (tenant_id, id)) strict;
  create table access_edges (id text not null check (${u('id')}), tenant_id text not null references tenants (id) check (${u('tenant_id')}), origin_kind text not null check (origin_kind in ('agent','session','identity')), origin_id text not null check (${u('origin_id')}), resource_id text not null check (${u('resource_id')}), mode text not null check (mode in ('r','rw')), permitted integer not null default 0 check (permitted in (0,1)), grant_source text not null default '', observed_count integer not null default 0 check (observed_count >= 0), first_seen text check (first_seen is null or ${ts('first_seen')}), last_seen text check (last_seen is null or ${ts('last_seen')}), confidence text not null default '' check (confidence in ('','high','medium','low')), signal_source text not null default '', created_at text not null check (${ts('created_at')}), updated_at text not null check (${ts('updated_at')}), origin_no integer, resource_no integer, check (permitted = 1 or observed_count > 0), primary key (tenant_id, id)) strict;
  create unique index access_edges_key on access_edges (origin_no, resource_no, mode);
  ${variant.res ? 'create index access_edges_resource_idx on access_edges (resource_no, id);' : ''}
  create table r (seq integer primary key, id text, tenant_id text, origin_kind text, origin_id text, origin_no integer, resource_id text, resource_no integer, mode text, observed_count integer, first_seen text, last_seen text, confidence text, signal_source text, recorded_at text) strict;`);
  const t = randomUUID(); db.prepare('insert into tenants values (?)').run(t);
  const nodeIds = Array.from({ length: NODES }, () => randomUUID());
  const fill = (n) => db.transaction(() => { const s = db.prepare('insert into r (id, tenant_id, origin_kind, origin_id, origin_no, resource_id, resource_no, mode, observed_count, first_seen, last_seen, confidence, signal_source, recorded_at) values (?,?,?,?,?,?,?,?,1,?,?,?,?,?)'); for (let i = 0; i < n; i++) { const o = Math.floor(Math.random() * 15000), rs = 15000 + Math.floor(Math.random() * 85000); s.run(randomUUID(), t, 'identity', nodeIds[o], o + 1, nodeIds[rs], rs + 1, Math.random() < 0.2 ? 'rw' : 'r', at, at, 'high', 'b', at); } })();
  const merge = db.prepare(`insert into access_edges (id, tenant_id, origin_kind, origin_id, origin_no, resource_id, resource_no, mode, permitted, grant_source, observed_count, first_seen, last_seen, confidence, signal_source, created_at, updated_at) select r.id, r.tenant_id, r.origin_kind, r.origin_id, r.origin_no, r.resource_id, r.resource_no, r.mode, 0, '', r.observed_count, r.first_seen, r.last_seen, r.confidence, r.signal_source, r.recorded_at, r.recorded_at from r where true order by r.seq on conflict (origin_no, resource_no, mode) do update set observed_count = access_edges.observed_count + excluded.observed_count, last_seen = excluded.last_seen`);
  for (let k = 0; k < N / M; k++) { fill(M); db.pragma('ignore_check_constraints = 1'); db.transaction(() => { merge.run(); db.exec('delete from r'); })(); db.pragma('ignore_check_constraints = 0'); }
  fill(M);
  db.pragma('ignore_check_constraints = 1');
  const t0 = performance.now(); db.transaction(() => { merge.run(); db.exec('delete from r'); })(); const ms = performance.now() - t0;
  db.close();
  return ms;
}
for (const rep of [0, 1]) for (const [name, v] of Object.entries({ full: { fk: true, res: true }, noFk: { fk: false, res: true }, noRes: { fk: true, res: false } })) console.log(rep, name.padEnd(6), (run(v) * 1000 / M).toFixed(2), 'µs/row (merge of 250k into 1M, incl. commit)');
for (const x of ['', '-wal', '-shm']) rmSync(join(tmpdir(), 'svc-merge-probe.db') + x, { force: true });
