/** Migration 10 (accessmap node numbers) for sqlite; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

/**
 * Node numbers (docs/accessmap.md "Node numbers"): every agent and every row of `access_nodes`
 * gets `no`, an integer from one space per database, assigned when the node is stored and never
 * changed or reused. `access_edges` (and the rows waiting in the recent level) carry the numbers of
 * their ends, and the two indexes an edge lands in at a random place hold numbers instead of UUID
 * text: the key `(origin_no, resource_no, mode)` and the resource index `(resource_no, id)`.
 * Entries of the key shrink from about 110 bytes to about 15, and the merge of the recent level,
 * which rewrites the index pages it touches, touches that many fewer.
 *
 * The tenant leaves the key: a number names one node of one tenant, so the pair of numbers places
 * an edge, and every query that seeks by number got its numbers from the tenant's own nodes.
 *
 * Numbers come from `access_node_counter` (one row; `last` is the highest number handed out).
 * Ingest takes a block of numbers at once; any other insert without a number (an agent created
 * through the API, a row written by hand) gets the next one from a trigger, and an insert with a
 * number above `last` moves `last` up, so the counter never hands out a number in use. A number
 * never changes: an update of `no` aborts.
 */
export const SQLITE_MIGRATION_010_ACCESSMAP_NUMBERS: readonly Migration[] = [
  {
    version: 10,
    name: 'accessmap_node_numbers',
    async up(tx) {
      const numbered = (table: 'agents' | 'access_nodes'): string[] => [
        `create unique index ${table}_no_key on ${table} (no)`,
        `create trigger ${table}_number after insert on ${table} when new.no is null
         begin
           update access_node_counter set last = last + 1 where id = 1;
           update ${table} set no = (select last from access_node_counter where id = 1) where rowid = new.rowid;
         end`,
        `create trigger ${table}_number_given after insert on ${table} when new.no > (select last from access_node_counter where id = 1)
         begin
           update access_node_counter set last = new.no where id = 1;
         end`,
        `create trigger ${table}_number_fixed before update of no on ${table} when old.no is not null and new.no is not old.no
         begin
           select raise(abort, 'a node number never changes');
         end`,
      ];
      const ends = (table: 'access_edges' | 'access_edges_recent'): string[] => [
        `alter table ${table} add column origin_no integer`,
        `alter table ${table} add column resource_no integer`,
        `update ${table} set
           origin_no = case when origin_kind = 'agent'
             then (select a.no from agents a where a.id = ${table}.origin_id and a.tenant_id = ${table}.tenant_id)
             else (select n.no from access_nodes n where n.id = ${table}.origin_id and n.tenant_id = ${table}.tenant_id) end,
           resource_no = (select n.no from access_nodes n where n.id = ${table}.resource_id and n.tenant_id = ${table}.tenant_id)`,
      ];
      const statements = [
        `create table access_node_counter (
          id integer primary key check (id = 1),
          last integer not null check (last >= 0)
        ) strict`,
        `alter table agents add column no integer`,
        `alter table access_nodes add column no integer`,
        // Existing nodes in id order (creation order for UUIDv7 ids), agents first.
        `update agents set no = n.k from (select rowid as r, row_number() over (order by id) as k from agents) n where n.r = agents.rowid`,
        `update access_nodes set no = n.k + (select count(*) from agents) from (select rowid as r, row_number() over (order by id) ` +
          `as k from access_nodes) n where n.r = access_nodes.rowid`,
        `insert into access_node_counter (id, last) values (1, (select count(*) from agents) + (select count(*) from access_nodes))`,
        ...numbered('agents'),
        ...numbered('access_nodes'),
        ...ends('access_edges'),
        ...ends('access_edges_recent'),
        `drop index access_edges_key`,
        `drop index access_edges_resource_idx`,
        `create unique index access_edges_key on access_edges (origin_no, resource_no, mode)`,
        `create index access_edges_resource_idx on access_edges (resource_no, id)`,
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
