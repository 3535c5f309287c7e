/** Migration 9 (accessmap linking changes) for sqlite; mirror of the other backend's file with the same number. */
import { sql } from 'kysely';
import type { Migration } from '../../migrations.js';

/** `class in (…)` of a linking resource (attack paths go through it), for `new` or `old` in a trigger. */
const linking = (row: 'new' | 'old'): string => `${row}.class in ('credential', 'config', 'code')`;

/**
 * `access_linking_changes`: one row each time a linking resource (credential, config, code) is
 * created, changes (class, name, parent) or stops being one, written by triggers on `access_nodes`,
 * so every writer (the service, a migration, a second process on the same file) leaves one
 * whatever path it took. A path search keeps the tenant's linking resources in memory
 * (modules/accessmap/linking-set.ts) and reads only the rows after the last one it applied,
 * instead of probing `access_nodes_linking_idx` for each access it walks and reading the rows of
 * those it finds (docs/accessmap.md "Queries"). A row with `linking = 1` carries the node as it now
 * is; `linking = 0` says the id is no longer a linking resource.
 *
 * Rows are written inside the writer's transaction: a rolled-back write takes its rows with it, and
 * `seq` (the rowid) may then be handed out again. `token` is random per row, so a reader that
 * remembers the seq and token of the last row it applied can tell a row that was rolled back and
 * replaced from the one it saw, and starts over. The table grows with the linking resources and
 * their changes, not with edges. PostgreSQL's migration 9 is empty (its searches keep the join;
 * several processes share it).
 */
export const SQLITE_MIGRATION_009_ACCESSMAP_LINKING: readonly Migration[] = [
  {
    version: 9,
    name: 'accessmap_linking_changes',
    async up(tx) {
      // random() >> 11 keeps the token within JavaScript's safe integers.
      const token = 'random() >> 11';
      const cols = 'tenant_id, node_id, linking, kind, name, class, parent_id, token';
      const gone = `old.tenant_id, old.id, 0, old.kind, old.name, old.class, old.parent_id, ${token}`;
      const now = `new.tenant_id, new.id, 1, new.kind, new.name, new.class, new.parent_id, ${token}`;
      const same = 'old.id = new.id and old.tenant_id = new.tenant_id';
      const statements = [
        `create table access_linking_changes (
          seq integer primary key,
          tenant_id text not null,
          node_id text not null,
          linking integer not null check (linking in (0, 1)),
          kind text not null,
          name text not null,
          class text not null,
          parent_id text,
          token integer not null
        ) strict`,
        `create trigger access_nodes_linking_insert after insert on access_nodes when ${linking('new')}
         begin
           insert into access_linking_changes (${cols}) values (${now});
         end`,
        `create trigger access_nodes_linking_update after update on access_nodes
         when (${linking('old')} or ${linking('new')})
           and (old.id is not new.id or old.tenant_id is not new.tenant_id or old.kind is not new.kind or old.name is not new.name
                or old.class is not new.class or old.parent_id is not new.parent_id)
         begin
           insert into access_linking_changes (${cols}) select ${gone} where ${linking('old')} and not (${linking('new')} and ${same});
           insert into access_linking_changes (${cols}) select ${now} where ${linking('new')};
         end`,
        `create trigger access_nodes_linking_delete after delete on access_nodes when ${linking('old')}
         begin
           insert into access_linking_changes (${cols}) values (${gone});
         end`,
      ];
      for (const s of statements) await sql.raw(s).execute(tx);
    },
  },
];
