/** Migration 8 (accessmap keys) for postgres; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

/**
 * The two random indexes of `access_edges` with the node first and the tenant last: the key
 * becomes `(origin_id, resource_id, mode, tenant_id)` and the resource index
 * `(resource_id, id, tenant_id)`.
 *
 * Why: path searches and incoming pages ask for the edges of a list of nodes in index order with
 * a LIMIT (`origin_id in (…) order by origin_id, resource_id, mode limit n`). PostgreSQL 15 returns
 * an index scan in index order for `= ANY(…)` only on the index's first column; on a later column
 * it plans a sort of every matching edge before the LIMIT, so a search paid for edges it never
 * kept. Ids are UUIDs unique across tenants, so the node alone places an edge; the tenant stays in
 * both indexes (queries and row-level security still filter on it, from the index). The unique
 * key covers the same columns, so every `on conflict (tenant_id, origin_id, resource_id, mode)`
 * still names it. SQLite plans these queries without a sort already; its migration 8 is empty.
 */
export const POSTGRES_MIGRATION_008_ACCESSMAP_KEYS: readonly Migration[] = [
  {
    version: 8,
    name: 'accessmap_keys',
    async up(tx) {
      const statements = [
        `drop index access_edges_key`,
        `create unique index access_edges_key on access_edges (origin_id, resource_id, mode, tenant_id)`,
        `drop index access_edges_resource_idx`,
        `create index access_edges_resource_idx on access_edges (resource_id, id, tenant_id)`,
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
