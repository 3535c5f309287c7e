/** Migration 10 (accessmap node cache) for sqlite; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

/**
 * What keeps the write path's node cache exact (modules/accessmap/node-cache.ts): ingest resolves
 * every observation's origin and resource (by id, by natural key, an agent by its external id),
 * and at 1,000,000 nodes those lookups cost as much as appending the edges, since each merge of
 * the recent level pushes the node indexes out of the page cache (docs/accessmap.md "The node
 * cache"). The cache holds only facts that something exists, so only a node that goes away or
 * changes what it is looked up by can make it wrong:
 *
 * - `access_node_changes`: one row each time an agent or an access node is deleted, or its id,
 *   tenant, kind, natural key (`ref`) or external id changes, with the values it had; written by
 *   triggers, so every writer leaves one (the service, a migration, a second process on the file,
 *   an operator's `sqlite3`). A reader applies the rows after the last one it applied, and keeps
 *   that row's random `token` to tell a row rolled back and replaced (its seq handed out again)
 *   from the one it saw, as `access_linking_changes` (migration 9) does.
 * - `access_node_cache_marks`: one row per cache (per connection that holds one). Before the cache
 *   adds what a transaction read or created, it writes a new random token into its row in that
 *   same transaction. Had the transaction (or the savepoint around the write) been rolled back,
 *   the row no longer holds that token the next time the cache is used, and it starts over; so
 *   nothing it learnt from a write that did not last survives.
 *
 * Both tables grow with deletions and renames of nodes and with processes started, not with
 * edges or lookups.
 */
export const SQLITE_MIGRATION_010_ACCESSMAP_NODE_CACHE: readonly Migration[] = [
  {
    version: 10,
    name: 'accessmap_node_cache',
    async up(tx) {
      // random() >> 11 keeps the token within JavaScript's safe integers.
      const token = 'random() >> 11';
      const cols = 'tenant_id, node_id, kind, ref, token';
      const statements = [
        `create table access_node_changes (
          seq integer primary key,
          tenant_id text not null,
          node_id text not null,
          kind text not null,
          ref text not null,
          token integer not null
        ) strict`,
        `create table access_node_cache_marks (
          id integer primary key,
          token integer not null
        ) strict`,
        `create trigger agents_node_cache_update after update on agents
         when old.id is not new.id or old.tenant_id is not new.tenant_id or old.external_id is not new.external_id
         begin
           insert into access_node_changes (${cols}) values (old.tenant_id, old.id, 'agent', old.external_id, ${token});
         end`,
        `create trigger agents_node_cache_delete after delete on agents
         begin
           insert into access_node_changes (${cols}) values (old.tenant_id, old.id, 'agent', old.external_id, ${token});
         end`,
        `create trigger access_nodes_cache_update after update on access_nodes
         when old.id is not new.id or old.tenant_id is not new.tenant_id or old.kind is not new.kind or old.ref is not new.ref
         begin
           insert into access_node_changes (${cols}) values (old.tenant_id, old.id, old.kind, old.ref, ${token});
         end`,
        `create trigger access_nodes_cache_delete after delete on access_nodes
         begin
           insert into access_node_changes (${cols}) values (old.tenant_id, old.id, old.kind, old.ref, ${token});
         end`,
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
