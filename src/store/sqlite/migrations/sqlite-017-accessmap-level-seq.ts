/** Migration 17 (accessmap: the recent level's seq only grows) for sqlite; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

/**
 * `access_edges_recent.seq` becomes `integer primary key autoincrement`. It was a plain rowid,
 * which SQLite hands out as one more than the largest in the table, so after the level was emptied
 * whole the next row got seq 1 again. A merged-up-to mark kept beside `access_edges` (the merge
 * worker of docs/accessmap.md, "What building it takes", step 1) compares seqs across merges: a
 * seq at or below the mark must never name a row that was not merged. With AUTOINCREMENT
 * (`sqlite_sequence`) a seq is never handed out twice, whatever is deleted.
 *
 * SQLite adds AUTOINCREMENT only by building the table anew: the rows that wait are copied with
 * their seqs (so their order and their operations in `access_edges_recent_ops` stay as they were),
 * and the new table's counter starts above the largest of them. The level is small by design (at
 * most `SERVICE_ACCESSMAP_MERGE_ROWS` rows, 250,000 by default), so this is quick.
 */
export const SQLITE_MIGRATION_017_ACCESSMAP_LEVEL_SEQ: readonly Migration[] = [
  {
    version: 17,
    name: 'accessmap_level_seq',
    async up(tx) {
      const columns =
        'seq, id, tenant_id, origin_kind, origin_id, resource_id, mode, observed_count, first_seen, last_seen, confidence, ' +
        'signal_source, recorded_at, origin_no, resource_no';
      for (const s of [
        `create table access_edges_recent_next (
          seq integer primary key autoincrement,
          id text not null,
          tenant_id text not null,
          origin_kind text not null,
          origin_id text not null,
          resource_id text not null,
          mode text not null,
          observed_count integer not null,
          first_seen text not null,
          last_seen text not null,
          confidence text not null,
          signal_source text not null,
          recorded_at text not null,
          origin_no integer,
          resource_no integer
        ) strict`,
        `insert into access_edges_recent_next (${columns}) select ${columns} from access_edges_recent order by seq`,
        `drop table access_edges_recent`,
        `alter table access_edges_recent_next rename to access_edges_recent`,
      ]) {
        await sql.raw(s).execute(tx);
      }
    },
  },
];
