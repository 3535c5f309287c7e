// Probe (not a scenario): what each part of today's merge costs per row at a size where the indexes outgrow memory
// pages: access_edges as SQLite migrations 5, 10 and 14 leave it (seq, the key on numbers, the resource index on the
// number alone, unique (tenant_id, id), the tenant foreign key), CHECKs off as the service merges. It prefills PREFILL
// rows by merges of 250,000, then times the next merges of 250,000 rows, commit included, with one part taken away per
// variant: the agent-exists test of each merged row, and the unique (tenant_id, id) index (with (tenant_id, seq) in its
// place, what whole-tenant pages could walk instead). docs/accessmap.md "What a merge's row costs".
// Run: node bench/probes/merge-parts.mjs [prefill=3000000] [reps=2]   (a file in the temp dir, synchronous=FULL)
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import D from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';

const PREFILL = Number(process.argv[2] ?? 3_000_000), REPS = Number(process.argv[3] ?? 2), M = 250_000, MEASURED = 2;
const NODES = Math.max(10_000, PREFILL / 10), ORIGINS = Math.floor(NODES * 0.15), AGENTS = Math.floor(ORIGINS * 0.3);
const at = '2026-11-26T10:00:00.123456789Z';
const file = join(tmpdir(), 'svc-merge-parts.db');
const clean = () => { for (const x of ['', '-wal', '-shm']) rmSync(file + x, { force: true }); };

const variants = {
  main: { agentCheck: true, idIndex: 'unique (tenant_id, id)' },
  'no-agent-check': { agentCheck: false, idIndex: 'unique (tenant_id, id)' },
  'tenant-seq': { agentCheck: true, idIndex: null, extra: 'create index access_edges_tenant_seq on access_edges (tenant_id, seq);' },
};

function run(v) {
  clean();
  const db = new D(file);
  db.pragma('journal_mode = WAL'); db.pragma('synchronous = FULL'); db.pragma('cache_size = -2097152'); db.pragma('foreign_keys = ON');
  db.exec(`create table tenants (id text primary key) strict;
    create table agents (id text not null, tenant_id text not null, no integer, primary key (tenant_id, id)) strict;
    create table access_edges (seq integer primary key autoincrement, id text not null, tenant_id text not null references tenants (id), origin_kind text not null,
      origin_id text not null, resource_id text not null, mode text not null, permitted integer not null default 0, grant_source text not null default '',
      observed_count integer not null default 0, first_seen text, last_seen text, confidence text not null default '', signal_source text not null default '',
      created_at text not null, updated_at text not null, origin_no integer, resource_no integer${v.idIndex ? `, ${v.idIndex}` : ''}) strict;
    create unique index access_edges_key on access_edges (origin_no, resource_no, mode);
    create index access_edges_resource_idx on access_edges (resource_no);
    ${v.extra ?? ''}
    create table access_edges_recent (seq integer primary key, id text not null, tenant_id text not null, origin_kind text not null, origin_id text not null,
      resource_id text not null, mode text not null, observed_count integer not null, first_seen text not null, last_seen text not null, confidence text not null,
      signal_source text not null, recorded_at text not null, origin_no integer, resource_no integer) strict;`);
  const t = randomUUID();
  db.prepare('insert into tenants values (?)').run(t);
  const ids = Array.from({ length: NODES }, () => randomUUID());
  db.transaction(() => { const s = db.prepare('insert into agents values (?, ?, ?)'); for (let i = 0; i < AGENTS; i++) s.run(ids[i], t, i + 1); })();
  // ids minted in increasing order, as UUIDv7 are
  let edgeNo = 0;
  const edgeId = () => { const h = (edgeNo++).toString(16).padStart(20, '0'); return `019a0000-${h.slice(0, 4)}-7${h.slice(4, 7)}-8${h.slice(7, 10)}-${h.slice(8, 20)}`; };
  const fill = (n) => db.transaction(() => {
    const s = db.prepare('insert into access_edges_recent (id, tenant_id, origin_kind, origin_id, origin_no, resource_id, resource_no, mode, observed_count, first_seen, last_seen, confidence, signal_source, recorded_at) values (?,?,?,?,?,?,?,?,1,?,?,?,?,?)');
    for (let i = 0; i < n; i++) {
      const o = Math.floor(Math.random() * ORIGINS), r = ORIGINS + Math.floor(Math.random() * (NODES - ORIGINS));
      s.run(edgeId(), t, o < AGENTS ? 'agent' : 'identity', ids[o], o + 1, ids[r], r + 1, Math.random() < 0.2 ? 'rw' : 'r', at, at, 'high', 'probe', at);
    }
  })();
  const merge = db.prepare(`insert into access_edges (id, tenant_id, origin_kind, origin_id, origin_no, resource_id, resource_no, mode, permitted, grant_source, observed_count, first_seen, last_seen, confidence, signal_source, created_at, updated_at)
    select r.id, r.tenant_id, r.origin_kind, r.origin_id, r.origin_no, r.resource_id, r.resource_no, r.mode, 0, '', r.observed_count, r.first_seen, r.last_seen, r.confidence, r.signal_source, r.recorded_at, r.recorded_at
    from access_edges_recent r where ${v.agentCheck ? "(r.origin_kind <> 'agent' or exists (select 1 from agents a where a.id = r.origin_id and a.tenant_id = r.tenant_id))" : 'true'}
    order by r.seq on conflict (origin_no, resource_no, mode) do update set observed_count = access_edges.observed_count + excluded.observed_count, last_seen = excluded.last_seen`);
  const empty = db.prepare('delete from access_edges_recent');
  const mergeAll = () => db.transaction(() => { merge.run(); empty.run(); })();
  for (let k = 0; k < PREFILL / M; k++) { fill(M); mergeAll(); }
  let ms = 0;
  for (let k = 0; k < MEASURED; k++) { fill(M); const t0 = performance.now(); mergeAll(); ms += performance.now() - t0; }
  db.close();
  return (ms * 1000) / (M * MEASURED);
}

console.log(`merge of ${M} rows into ${PREFILL.toLocaleString('en-US')}+ edges, ${NODES} nodes; µs per merged row, commit included (mean of ${MEASURED} merges)`);
for (let rep = 0; rep < REPS; rep++) for (const [name, v] of Object.entries(variants)) console.log(rep, name.padEnd(16), run(v).toFixed(2));
clean();
