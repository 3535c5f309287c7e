/** Migration 10 (accessmap node numbers) for postgres; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

/**
 * Node numbers, as on SQLite (see that file): `agents.no` and `access_nodes.no` from the sequence
 * `access_node_no_seq` (the column default; ingest takes blocks of it), never changed (a trigger
 * refuses); `access_edges` carries the numbers of its ends, and its two random indexes hold them:
 * the key `(origin_no, resource_no, mode)` and the resource index `(resource_no, id)`, each with
 * the tenant as an included column so that row-level security is checked from the index and path
 * searches stay index-only scans.
 *
 * The tables are under FORCE ROW LEVEL SECURITY, which confines their owner too, so the numbering
 * of existing rows lifts FORCE for the length of this transaction and puts it back.
 */
export const POSTGRES_MIGRATION_010_ACCESSMAP_NUMBERS: readonly Migration[] = [
  {
    version: 10,
    name: 'accessmap_node_numbers',
    async up(tx) {
      const tables = ['agents', 'access_nodes', 'access_edges'];
      const numbered = (table: 'agents' | 'access_nodes'): string[] => [
        `alter table ${table} add column no bigint`,
        `update ${table} set no = n.k + ${table === 'agents' ? '0' : '(select count(*) from agents)'} from (select id, row_number() ` +
          `over (order by id) as k from ${table}) n where n.id = ${table}.id`,
        `alter table ${table} alter column no set default nextval('access_node_no_seq'), alter column no set not null`,
        `create unique index ${table}_no_key on ${table} (no)`,
        `create trigger ${table}_number_fixed before update of no on ${table} for each row when (old.no is distinct from new.no) ` +
          `execute function access_node_no_fixed()`,
      ];
      const statements = [
        ...tables.map((t) => `alter table ${t} no force row level security`),
        `create sequence access_node_no_seq as bigint`,
        `create function access_node_no_fixed() returns trigger language plpgsql as $$ begin raise exception 'a node number never ` +
          `changes'; end $$`,
        ...numbered('agents'),
        ...numbered('access_nodes'),
        `select setval('access_node_no_seq', greatest(1, (select count(*) from agents) + (select count(*) from access_nodes)), ` +
          `(select count(*) from agents) + (select count(*) from access_nodes) > 0)`,
        `alter table access_edges add column origin_no bigint, add column resource_no bigint`,
        `update access_edges e set
           origin_no = case when e.origin_kind = 'agent'
             then (select a.no from agents a where a.id = e.origin_id and a.tenant_id = e.tenant_id)
             else (select n.no from access_nodes n where n.id = e.origin_id and n.tenant_id = e.tenant_id) end,
           resource_no = (select n.no from access_nodes n where n.id = e.resource_id and n.tenant_id = e.tenant_id)`,
        `drop index access_edges_key`,
        `drop index access_edges_resource_idx`,
        `create unique index access_edges_key on access_edges (origin_no, resource_no, mode) include (tenant_id)`,
        `create index access_edges_resource_idx on access_edges (resource_no, id) include (tenant_id)`,
        ...tables.map((t) => `alter table ${t} force row level security`),
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
