/**
 * The access map's tables (workspaces, nodes, edges) and the collector's ingest bookkeeping that feeds them; on SQLite the edges in a file
 * of their own (sqlite-edge-file.ts).
 */
import { tablesOf, type ModuleStorage } from '../../store/module-storage.js';
import { ACCESSMAP_APP_ROLE_GRANTS, ACCESSMAP_GLOBAL_TABLES, ACCESSMAP_TENANT_TABLES } from '../../store/schema-accessmap.js';
import { INGEST_APP_ROLE_GRANTS, INGEST_GLOBAL_TABLES, INGEST_TENANT_TABLES } from '../../store/schema-ingest.js';
import { SQLITE_MIGRATION_005_ACCESSMAP } from '../../store/sqlite/migrations/sqlite-005-accessmap.js';
import { SQLITE_MIGRATION_006_INGEST } from '../../store/sqlite/migrations/sqlite-006-ingest.js';
import { SQLITE_MIGRATION_008_ACCESSMAP_KEYS } from '../../store/sqlite/migrations/sqlite-008-accessmap-keys.js';
import { SQLITE_MIGRATION_009_ACCESSMAP_LINKING } from '../../store/sqlite/migrations/sqlite-009-accessmap-linking.js';
import { SQLITE_MIGRATION_010_ACCESSMAP_NUMBERS } from '../../store/sqlite/migrations/sqlite-010-accessmap-numbers.js';
import { SQLITE_MIGRATION_011_ACCESSMAP_NUMBER_COVER } from '../../store/sqlite/migrations/sqlite-011-accessmap-number-cover.js';
import { SQLITE_MIGRATION_012_ACCESSMAP_DROP_NUMBER_COVER } from '../../store/sqlite/migrations/sqlite-012-accessmap-drop-number-cover.js';
import { SQLITE_MIGRATION_013_ACCESSMAP_LINKING_NUMBERS } from '../../store/sqlite/migrations/sqlite-013-accessmap-linking-numbers.js';
import { SQLITE_MIGRATION_014_ACCESSMAP_EDGE_SEQ } from '../../store/sqlite/migrations/sqlite-014-accessmap-edge-seq.js';
import { SQLITE_MIGRATION_015_ACCESSMAP_NODE_LOOKUP_COVER } from '../../store/sqlite/migrations/sqlite-015-accessmap-node-lookup-cover.js';
import { SQLITE_MIGRATION_016_ACCESSMAP_LEVEL_OPS } from '../../store/sqlite/migrations/sqlite-016-accessmap-level-ops.js';
import { SQLITE_MIGRATION_017_ACCESSMAP_LEVEL_SEQ } from '../../store/sqlite/migrations/sqlite-017-accessmap-level-seq.js';
import { SQLITE_MIGRATION_018_ACCESSMAP_NODE_EPOCH } from '../../store/sqlite/migrations/sqlite-018-accessmap-node-epoch.js';
import { POSTGRES_MIGRATION_005_ACCESSMAP } from '../../store/postgres/migrations/postgres-005-accessmap.js';
import { POSTGRES_MIGRATION_006_INGEST } from '../../store/postgres/migrations/postgres-006-ingest.js';
import { POSTGRES_MIGRATION_008_ACCESSMAP_KEYS } from '../../store/postgres/migrations/postgres-008-accessmap-keys.js';
import { POSTGRES_MIGRATION_009_ACCESSMAP_LINKING } from '../../store/postgres/migrations/postgres-009-accessmap-linking.js';
import { POSTGRES_MIGRATION_010_ACCESSMAP_NUMBERS } from '../../store/postgres/migrations/postgres-010-accessmap-numbers.js';
import { POSTGRES_MIGRATION_011_ACCESSMAP_NUMBER_COVER } from '../../store/postgres/migrations/postgres-011-accessmap-number-cover.js';
import {
  POSTGRES_MIGRATION_012_ACCESSMAP_DROP_NUMBER_COVER,
} from '../../store/postgres/migrations/postgres-012-accessmap-drop-number-cover.js';
import {
  POSTGRES_MIGRATION_013_ACCESSMAP_LINKING_NUMBERS,
} from '../../store/postgres/migrations/postgres-013-accessmap-linking-numbers.js';
import { POSTGRES_MIGRATION_014_ACCESSMAP_EDGE_SEQ } from '../../store/postgres/migrations/postgres-014-accessmap-edge-seq.js';
import {
  POSTGRES_MIGRATION_015_ACCESSMAP_NODE_LOOKUP_COVER,
} from '../../store/postgres/migrations/postgres-015-accessmap-node-lookup-cover.js';
import { POSTGRES_MIGRATION_016_ACCESSMAP_LEVEL_OPS } from '../../store/postgres/migrations/postgres-016-accessmap-level-ops.js';
import { POSTGRES_MIGRATION_017_ACCESSMAP_LEVEL_SEQ } from '../../store/postgres/migrations/postgres-017-accessmap-level-seq.js';
import { POSTGRES_MIGRATION_018_ACCESSMAP_NODE_EPOCH } from '../../store/postgres/migrations/postgres-018-accessmap-node-epoch.js';
import { edgeFile } from './sqlite-edge-file.js';

export const accessmapStorage: ModuleStorage = {
  name: 'accessmap',
  // Node numbers (migration 10): the column default of agents.no and access_nodes.no, and ingest's blocks.
  tables: [
    ...tablesOf(ACCESSMAP_TENANT_TABLES, ACCESSMAP_GLOBAL_TABLES, ACCESSMAP_APP_ROLE_GRANTS),
    ...tablesOf(INGEST_TENANT_TABLES, INGEST_GLOBAL_TABLES, INGEST_APP_ROLE_GRANTS),
  ],
  migrations: {
    sqlite: [
      ...SQLITE_MIGRATION_005_ACCESSMAP,
      ...SQLITE_MIGRATION_006_INGEST,
      ...SQLITE_MIGRATION_008_ACCESSMAP_KEYS,
      ...SQLITE_MIGRATION_009_ACCESSMAP_LINKING,
      ...SQLITE_MIGRATION_010_ACCESSMAP_NUMBERS,
      ...SQLITE_MIGRATION_011_ACCESSMAP_NUMBER_COVER,
      ...SQLITE_MIGRATION_012_ACCESSMAP_DROP_NUMBER_COVER,
      ...SQLITE_MIGRATION_013_ACCESSMAP_LINKING_NUMBERS,
      ...SQLITE_MIGRATION_014_ACCESSMAP_EDGE_SEQ,
      ...SQLITE_MIGRATION_015_ACCESSMAP_NODE_LOOKUP_COVER,
      ...SQLITE_MIGRATION_016_ACCESSMAP_LEVEL_OPS,
      ...SQLITE_MIGRATION_017_ACCESSMAP_LEVEL_SEQ,
      ...SQLITE_MIGRATION_018_ACCESSMAP_NODE_EPOCH,
    ],
    postgres: [
      ...POSTGRES_MIGRATION_005_ACCESSMAP,
      ...POSTGRES_MIGRATION_006_INGEST,
      ...POSTGRES_MIGRATION_008_ACCESSMAP_KEYS,
      ...POSTGRES_MIGRATION_009_ACCESSMAP_LINKING,
      ...POSTGRES_MIGRATION_010_ACCESSMAP_NUMBERS,
      ...POSTGRES_MIGRATION_011_ACCESSMAP_NUMBER_COVER,
      ...POSTGRES_MIGRATION_012_ACCESSMAP_DROP_NUMBER_COVER,
      ...POSTGRES_MIGRATION_013_ACCESSMAP_LINKING_NUMBERS,
      ...POSTGRES_MIGRATION_014_ACCESSMAP_EDGE_SEQ,
      ...POSTGRES_MIGRATION_015_ACCESSMAP_NODE_LOOKUP_COVER,
      ...POSTGRES_MIGRATION_016_ACCESSMAP_LEVEL_OPS,
      ...POSTGRES_MIGRATION_017_ACCESSMAP_LEVEL_SEQ,
      ...POSTGRES_MIGRATION_018_ACCESSMAP_NODE_EPOCH,
    ],
  },
  sequences: ['access_node_no_seq'],
  sqliteFiles: [edgeFile],
};
