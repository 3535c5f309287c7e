/**
 * Migration 16 (accessmap: grants and agent deletes wait in the recent level; merges stop testing each row's agent) for sqlite; mirror of
 * the other backend's file with the same number.
 */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

/**
 * Two changes to the recent level (docs/accessmap.md "The recent level"):
 *
 * - **Grants wait in the level like observations.** A grant made while observations wait used to
 *   fold them all first (a merge of up to `SERVICE_ACCESSMAP_MERGE_ROWS` rows inside the grant's
 *   request). Now it is appended to the level as a row of its own, in commit order, and
 *   `access_edges_recent_ops` says which seqs are such operations and what they do; a fold applies
 *   observations and operations in seq order, so the edges come out as if each had been written
 *   directly when it was committed.
 * - **An agent's delete waits there too**, as an operation `forget` behind the agent's waiting
 *   rows: a fold merges them and then removes the agent's edges, so a merge never meets a waiting
 *   row of an agent that no longer exists and no longer tests every row against `agents` (until
 *   now a delete removed the agent's merged edges at once and left its waiting rows for that test
 *   to skip). Rows a version-15 database left waiting for agents deleted since are removed here,
 *   since the merge would no longer skip them.
 */
export const SQLITE_MIGRATION_016_ACCESSMAP_LEVEL_OPS: readonly Migration[] = [
  {
    version: 16,
    name: 'accessmap_level_ops',
    async up(tx) {
      for (const s of [
        `create table access_edges_recent_ops (
          seq integer primary key,
          op text not null check (op in ('grant', 'forget'))
        ) strict`,
        `delete from access_edges_recent
          where origin_kind = 'agent'
            and not exists (select 1 from agents a where a.tenant_id = access_edges_recent.tenant_id and a.id = ` +
              `access_edges_recent.origin_id)`,
      ]) {
        await sql.raw(s).execute(tx);
      }
    },
  },
];
