/**
 * Migration 18 (accessmap: a counter of node changes, for the node cache) for sqlite; mirror of the other backend's file with the same
 * number.
 */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

/**
 * What keeps the writer's node cache exact (modules/accessmap/node-cache.ts): ingest resolves every
 * observation's two ends to node numbers, and the cache keeps what lookups answered, which stays
 * true until a node goes away or a column a lookup answers with is rewritten. `access_node_epoch`
 * counts those events: triggers add one on every delete of an agent or an access node and on
 * every update that changes its id, tenant, kind, natural key or external id (an agent's PATCH
 * that leaves those alone moves nothing; a node's number is given once, at insert, and never
 * changes: migration 10), whoever runs the
 * statement (the service, another process on the file, an operator's `sqlite3`), in the same
 * transaction. The cache is emptied when the counter it last read has moved.
 */
export const SQLITE_MIGRATION_018_ACCESSMAP_NODE_EPOCH: readonly Migration[] = [
  {
    version: 18,
    name: 'accessmap_node_epoch',
    async up(tx) {
      const bump = 'begin update access_node_epoch set n = n + 1 where id = 1; end';
      for (const s of [
        'create table access_node_epoch (id integer primary key check (id = 1), n integer not null) strict',
        'insert into access_node_epoch (id, n) values (1, 0)',
        `create trigger access_nodes_epoch_delete after delete on access_nodes ${bump}`,
        `create trigger access_nodes_epoch_update after update of id, tenant_id, kind, ref on access_nodes
          when old.id is not new.id or old.tenant_id is not new.tenant_id or old.kind is not new.kind or old.ref is not new.ref ${bump}`,
        `create trigger agents_epoch_delete after delete on agents ${bump}`,
        `create trigger agents_epoch_update after update of id, tenant_id, external_id on agents
          when old.id is not new.id or old.tenant_id is not new.tenant_id or old.external_id is not new.external_id ${bump}`,
      ]) {
        await sql.raw(s).execute(tx);
      }
    },
  },
];
