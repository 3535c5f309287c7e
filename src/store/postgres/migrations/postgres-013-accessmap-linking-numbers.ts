/** Migration 13 (accessmap linking resources by number) for postgres; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

/**
 * `access_nodes_linking_no`: the linking resources (credential, config, code) by node number, with
 * the tenant. A path search walks accesses by number and needs the row of a resource only when it
 * links principals; its walk left-joins this index, which holds a few entries per tenant, so an
 * access to any other resource costs a probe of a small index instead of a row of `access_nodes`
 * (docs/accessmap.md "Searches that walk numbers").
 */
export const POSTGRES_MIGRATION_013_ACCESSMAP_LINKING_NUMBERS: readonly Migration[] = [
  {
    version: 13,
    name: 'accessmap_linking_numbers',
    async up(tx) {
      await sql
        .raw(
          `create index access_nodes_linking_no on access_nodes (no) include (tenant_id) where class in ('credential', 'config', 'code')`,
        )
        .execute(tx);
    },
  },
];
