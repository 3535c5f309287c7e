/**
 * Takes a database migrated to 18 back to version 9 (11 added an index that 12 dropped; 13 adds the linking resources' number index; 14 the
 * edges' seq; 15 the covering lookup indexes; 16 the recent level's operations; 17 its seq that only grows; 18 the counter of node
 * changes), as it was before node numbers: for the
 * migration tests, which write data with today's code, step the schema back and migrate again.
 */
import type { TestStore } from '../../helpers/stores.js';

/**
 * Moves `access_edges` back from the edge file into svc.db (SQLite), as it was before the store
 * moved it after the migrations (modules/accessmap/sqlite-edge-file.ts): the same table, indexes, rows and
 * counter; the merged rows still in the level removed, as a merge before the move did; the edge
 * file's mark and svc.db's record of the move dropped. The next start moves it again.
 */
export async function undoEdgeFile(h: TestStore): Promise<void> {
  const q = (s: string) => h.admin.query(s);
  await q('delete from access_edges_recent_ops where seq <= (select up_to from edges.access_edges_merged)');
  await q('delete from access_edges_recent where seq <= (select up_to from edges.access_edges_merged)');
  const ddl = await h.admin.query<{ type: string; sql: string }>(
    "select type, sql from edges.sqlite_master where tbl_name = 'access_edges' and sql is not null order by type desc",
  );
  for (const d of ddl)
    await q(
      d.type === 'table'
        ? d.sql.replace(/^CREATE TABLE access_edges/i, 'create table main.access_edges')
        : d.sql.replace(/^CREATE (UNIQUE )?INDEX (\w+)/i, (_m, u: string | undefined, n: string) => `create ${u ?? ''}index main.${n}`),
    );
  await q('insert into main.access_edges select * from edges.access_edges');
  await q("delete from main.sqlite_sequence where name = 'access_edges'");
  await q("insert into main.sqlite_sequence (name, seq) select name, seq from edges.sqlite_sequence where name = 'access_edges'");
  await q('drop table edges.access_edges');
  await q('drop table edges.access_edges_merged');
  await q('drop table main.access_edges_file');
}

/** Takes a database migrated to 18 back to version 17: no counter of node changes, no triggers writing it (SQLite; nothing on Postgres). */
export async function undoMigration018(h: TestStore, backend: 'sqlite' | 'postgres'): Promise<void> {
  if (backend === 'sqlite') {
    for (const t of ['access_nodes_epoch_delete', 'access_nodes_epoch_update', 'agents_epoch_delete', 'agents_epoch_update'])
      await h.admin.query(`drop trigger ${t}`);
    await h.admin.query('drop table access_node_epoch');
  }
  await h.admin.query('delete from schema_migrations where version between 18 and 18');
}

/**
 * Takes a database migrated to 18 back to version 16: the recent level's seq a plain rowid again
 * (SQLite; nothing on Postgres), and the edges back in svc.db. The waiting rows keep their seqs.
 */
export async function undoMigration017(h: TestStore, backend: 'sqlite' | 'postgres'): Promise<void> {
  await undoMigration018(h, backend);
  if (backend === 'sqlite') {
    await undoEdgeFile(h);
    const q = (s: string) => h.admin.query(s);
    await q(`create table access_edges_recent_v16 (
      seq integer primary key, id text not null, tenant_id text not null, origin_kind text not null, origin_id text not null,
      resource_id text not null, mode text not null, observed_count integer not null, first_seen text not null, last_seen text not null,
      confidence text not null, signal_source text not null, recorded_at text not null, origin_no integer, resource_no integer) strict`);
    await q(
      'insert into access_edges_recent_v16 select seq, id, tenant_id, origin_kind, origin_id, resource_id, mode, observed_count, ' +
        'first_seen, last_seen, confidence, signal_source, recorded_at, origin_no, resource_no from access_edges_recent',
    );
    await q('drop table access_edges_recent');
    await q('alter table access_edges_recent_v16 rename to access_edges_recent');
    await q("delete from sqlite_sequence where name = 'access_edges_recent'");
  }
  await h.admin.query('delete from schema_migrations where version between 17 and 18');
}

/**
 * Takes a database migrated to 18 back to version 15: no table of the operations waiting in the recent level (SQLite; nothing on Postgres).
 */
export async function undoMigration016(h: TestStore, backend: 'sqlite' | 'postgres'): Promise<void> {
  await undoMigration017(h, backend);
  if (backend === 'sqlite') await h.admin.query('drop table access_edges_recent_ops');
  await h.admin.query('delete from schema_migrations where version between 16 and 18');
}

/**
 * Takes a database migrated to 18 back to version 14: the `(tenant_id, id)` indexes of `access_nodes` and `agents` again, without the
 * columns lookups read.
 */
export async function undoMigration015(h: TestStore, backend: 'sqlite' | 'postgres'): Promise<void> {
  const q = (s: string) => h.admin.query(s);
  await undoMigration016(h, backend);
  await q('create index access_nodes_tenant_id_idx on access_nodes (tenant_id, id)');
  await q('drop index access_nodes_lookup');
  await q('create index agents_tenant_id_idx on agents (tenant_id, id)');
  await q('drop index agents_lookup');
  await q('delete from schema_migrations where version between 15 and 18');
}

/** Takes a database migrated to 18 back to version 13: `access_edges` without `seq`, its resource index `(resource_no, id)` again. */
export async function undoMigration014(h: TestStore, backend: 'sqlite' | 'postgres'): Promise<void> {
  const q = (s: string) => h.admin.query(s);
  await undoMigration015(h, backend);
  if (backend === 'sqlite') {
    const columns =
      'id, tenant_id, origin_kind, origin_id, resource_id, mode, permitted, grant_source, observed_count, first_seen, last_seen, ' +
      'confidence, signal_source, created_at, updated_at, origin_no, resource_no';
    // Version 13's columns and indexes, without `seq`; its CHECKs are left out (migration 14
    // builds its table with its own and copies the rows into it). Rows in reverse id order, so
    // that rowid order is not id order: migration 14 must number by id.
    await q(`create table access_edges_v13 as select ${columns} from access_edges order by id desc`);
    await q('drop table access_edges');
    await q('alter table access_edges_v13 rename to access_edges');
    await q("delete from sqlite_sequence where name = 'access_edges'");
    await q('create unique index access_edges_pk on access_edges (tenant_id, id)');
    await q('create unique index access_edges_key on access_edges (origin_no, resource_no, mode)');
    await q('create index access_edges_resource_idx on access_edges (resource_no, id)');
  } else {
    await q('alter table access_edges drop column seq');
    await q('create index access_edges_resource_idx on access_edges (resource_no, id) include (tenant_id)');
  }
  await q('delete from schema_migrations where version between 14 and 18');
}

export async function undoMigration010(h: TestStore, backend: 'sqlite' | 'postgres'): Promise<void> {
  const q = (s: string) => h.admin.query(s);
  await undoMigration014(h, backend);
  await q('drop index access_nodes_linking_no');
  if (backend === 'sqlite') {
    for (const t of ['agents', 'access_nodes'])
      for (const tr of ['number', 'number_given', 'number_fixed']) await q(`drop trigger ${t}_${tr}`);
    for (const i of ['agents_no_key', 'access_nodes_no_key', 'access_edges_key', 'access_edges_resource_idx']) await q(`drop index ${i}`);
    await q('alter table agents drop column no');
    await q('alter table access_nodes drop column no');
    for (const t of ['access_edges', 'access_edges_recent'])
      for (const c of ['origin_no', 'resource_no']) await q(`alter table ${t} drop column ${c}`);
    await q('drop table access_node_counter');
    await q('create unique index access_edges_key on access_edges (tenant_id, origin_id, resource_id, mode)');
    await q('create index access_edges_resource_idx on access_edges (tenant_id, resource_id, id)');
  } else {
    for (const t of ['agents', 'access_nodes']) await q(`drop trigger ${t}_number_fixed on ${t}`);
    await q('drop function access_node_no_fixed()');
    // Dropping the columns drops the indexes on them (the numbered key and resource index too).
    await q('alter table agents drop column no');
    await q('alter table access_nodes drop column no');
    await q('alter table access_edges drop column origin_no, drop column resource_no');
    await q('drop sequence access_node_no_seq');
    await q('create unique index access_edges_key on access_edges (origin_id, resource_id, mode, tenant_id)');
    await q('create index access_edges_resource_idx on access_edges (resource_id, id, tenant_id)');
  }
  await q('delete from schema_migrations where version between 10 and 18');
}
