// Probe (not a scenario): what the GLOB CHECKs of access_edges cost per inserted row on SQLite, against no CHECKs and two
// spellings without GLOB; it also shows rows each spelling lets through. docs/accessmap.md "Checked once".
// Run: node bench/probes/sqlite-check-cost.mjs   (in-memory, about a minute)
import D from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
const HEX = '[0-9a-f]', Dg = '[0-9]';
const UG = `${HEX.repeat(8)}-${HEX.repeat(4)}-${HEX.repeat(4)}-${HEX.repeat(4)}-${HEX.repeat(12)}`;
const TG = `${Dg.repeat(4)}-${Dg.repeat(2)}-${Dg.repeat(2)}T${Dg.repeat(2)}:${Dg.repeat(2)}:${Dg.repeat(2)}.${Dg.repeat(9)}Z`;
const variants = {
  none: { u: () => '1', t: () => '1' },
  glob: { u: (c) => `${c} glob '${UG}'`, t: (c) => `${c} glob '${TG}'` },
  trim: { u: (c) => `length(${c}) = 36 and ltrim(${c}, '0123456789abcdef-') = '' and substr(${c}, 9, 1) = '-' and substr(${c}, 14, 1) = '-' and substr(${c}, 19, 1) = '-' and substr(${c}, 24, 1) = '-' and length(replace(${c}, '-', '')) = 32`,
          t: (c) => `length(${c}) = 30 and ltrim(${c}, '0123456789-T:.Z') = '' and ${c} glob '????-??-??T??:??:??.?????????Z' and length(replace(replace(replace(replace(replace(${c}, '-', ''), 'T', ''), ':', ''), '.', ''), 'Z', '')) = 23` },
  globq: { u: (c) => `${c} glob '????????-????-????-????-????????????' and ltrim(${c}, '0123456789abcdef-') = '' and length(replace(${c}, '-', '')) = 32`,
           t: (c) => `${c} glob '????-??-??T??:??:??.?????????Z' and ltrim(${c}, '0123456789-T:.Z') = '' and length(replace(replace(replace(replace(replace(${c}, '-', ''), 'T', ''), ':', ''), '.', ''), 'Z', '')) = 23` },
};
const N = 250000; const at = '2026-11-26T10:00:00.123456789Z';
const rows = Array.from({ length: N }, () => [randomUUID(), randomUUID(), randomUUID(), randomUUID(), at, at, at, at]);
for (const rep of [0, 1]) for (const [name, v] of Object.entries(variants)) {
  const db = new D(':memory:');
  db.exec(`create table t (id text not null check (${v.u('id')}), tenant_id text not null check (${v.u('tenant_id')}), o text not null check (${v.u('o')}), r text not null check (${v.u('r')}), f text check (f is null or ${v.t('f')}), l text check (l is null or ${v.t('l')}), c text not null check (${v.t('c')}), u text not null check (${v.t('u')})) strict`);
  db.exec('create table src (id, tenant_id, o, r, f, l, c, u)');
  const ins = db.prepare('insert into src values (?,?,?,?,?,?,?,?)');
  db.transaction(() => { for (const r of rows) ins.run(...r); })();
  const t0 = performance.now();
  db.exec('insert into t select * from src');
  console.log(rep, name.padEnd(6), ((performance.now() - t0) * 1000 / N).toFixed(2), 'µs/row');
  // correctness probes
  if (rep === 0) for (const bad of ['ABCDEF00-0000-0000-0000-000000000000', '0000000-00000-0000-0000-000000000000', 'g0000000-0000-0000-0000-000000000000', '00000000-0000-0000-0000-00000000000']) { try { db.prepare('insert into t values (?,?,?,?,?,?,?,?)').run(bad, rows[0][1], rows[0][2], rows[0][3], at, at, at, at); console.log('  ACCEPTED bad', bad); } catch {} }
  if (rep === 0) for (const bad of ['2026-11-26T10:00:00.12345678Z', '2026-11-26 10:00:00.123456789Z', '2026-11-26T10:00:00.123456789z', '2026-1a-26T10:00:00.123456789Z', '2026-11-26T10-00:00.123456789Z']) { try { db.prepare('insert into t values (?,?,?,?,?,?,?,?)').run(randomUUID(), rows[0][1], rows[0][2], rows[0][3], bad, at, at, at); console.log('  ACCEPTED bad ts', bad); } catch {} }
}
