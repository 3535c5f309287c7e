/**
 * Takes a database migrated to 13 back to version 9 (11 added an index that 12 dropped; 13 adds the linking resources' number index), as it was before node numbers: for the
 * migration tests, which write data with today's code, step the schema back and migrate again.
 */
import type { TestStore } from '../../helpers/stores.js';

export async function undoMigration010(h: TestStore, backend: 'sqlite' | 'postgres'): Promise<void> {
  const q = (s: string) => h.admin.query(s);
  await q('drop index access_nodes_linking_no');
  if (backend === 'sqlite') {
    for (const t of ['agents', 'access_nodes']) for (const tr of ['number', 'number_given', 'number_fixed']) await q(`drop trigger ${t}_${tr}`);
    for (const i of ['agents_no_key', 'access_nodes_no_key', 'access_edges_key', 'access_edges_resource_idx']) await q(`drop index ${i}`);
    await q('alter table agents drop column no');
    await q('alter table access_nodes drop column no');
    for (const t of ['access_edges', 'access_edges_recent']) for (const c of ['origin_no', 'resource_no']) await q(`alter table ${t} drop column ${c}`);
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
  await q('delete from schema_migrations where version >= 10');
}
