import { sql, type Transaction } from 'kysely';
import type { Migration } from '../migrations.js';
import { SQLITE_MIGRATION_002_IDENTITY } from './migrations/sqlite-002-identity.js';
import { SQLITE_MIGRATION_003_LEDGER } from './migrations/sqlite-003-ledger.js';
import { SQLITE_MIGRATION_004_WEBAUTHN } from './migrations/sqlite-004-webauthn.js';
import { SQLITE_MIGRATION_005_ACCESSMAP } from './migrations/sqlite-005-accessmap.js';
import { SQLITE_MIGRATION_006_INGEST } from './migrations/sqlite-006-ingest.js';
import { SQLITE_MIGRATION_007_AUDIT_INTENTS } from './migrations/sqlite-007-audit-intents.js';
import { SQLITE_MIGRATION_008_ACCESSMAP_KEYS } from './migrations/sqlite-008-accessmap-keys.js';
import { SQLITE_MIGRATION_009_ACCESSMAP_LINKING } from './migrations/sqlite-009-accessmap-linking.js';
import { SQLITE_MIGRATION_010_ACCESSMAP_NUMBERS } from './migrations/sqlite-010-accessmap-numbers.js';
import { SQLITE_MIGRATION_011_ACCESSMAP_NUMBER_COVER } from './migrations/sqlite-011-accessmap-number-cover.js';
import { SQLITE_MIGRATION_012_ACCESSMAP_DROP_NUMBER_COVER } from './migrations/sqlite-012-accessmap-drop-number-cover.js';
import { SQLITE_MIGRATION_013_ACCESSMAP_LINKING_NUMBERS } from './migrations/sqlite-013-accessmap-linking-numbers.js';
import { SQLITE_MIGRATION_014_ACCESSMAP_EDGE_SEQ } from './migrations/sqlite-014-accessmap-edge-seq.js';
import { SQLITE_MIGRATION_015_ACCESSMAP_NODE_LOOKUP_COVER } from './migrations/sqlite-015-accessmap-node-lookup-cover.js';
import { SQLITE_MIGRATION_016_ACCESSMAP_LEVEL_OPS } from './migrations/sqlite-016-accessmap-level-ops.js';
import { SQLITE_MIGRATION_017_ACCESSMAP_LEVEL_SEQ } from './migrations/sqlite-017-accessmap-level-seq.js';
import { SQLITE_MIGRATION_018_ACCESSMAP_NODE_EPOCH } from './migrations/sqlite-018-accessmap-node-epoch.js';
import { SQLITE_MIGRATION_019_AUDIT_HEADS_FORWARD } from './migrations/sqlite-019-audit-heads-forward.js';
import { SQLITE_MIGRATION_020_RESERVED } from './migrations/sqlite-020-reserved.js';
import { SQLITE_MIGRATION_021_SECURITY_FINDINGS } from './migrations/sqlite-021-security-findings.js';
import { SQLITE_MIGRATION_022_GOVERNANCE } from './migrations/sqlite-022-governance.js';
import { SQLITE_MIGRATION_023_EVENTING } from './migrations/sqlite-023-eventing.js';
import { SQLITE_MIGRATION_024_CONSOLE } from './migrations/sqlite-024-console.js';
import { SQLITE_MIGRATION_025_COMPLIANCE } from './migrations/sqlite-025-compliance.js';
import { SQLITE_MIGRATION_028_CLAUDE_POLICY } from './migrations/sqlite-028-claude-policy.js';
import { SQLITE_MIGRATION_027_REPLICAS } from './migrations/sqlite-027-replicas.js';
import { SQLITE_MIGRATION_029_LEDGER_ERASURE } from './migrations/sqlite-029-ledger-erasure.js';
import { SQLITE_MIGRATION_030_EGRESS_FENCE } from './migrations/sqlite-030-egress-fence.js';
import { SQLITE_MIGRATION_031_REPLICA_LIMITS } from './migrations/sqlite-031-replica-limits.js';
import { SQLITE_MIGRATION_032_CONNECTOR_SYSTEM_LANE } from './migrations/sqlite-032-connector-system-lane.js';
import { SQLITE_MIGRATION_026_CONNECTORS } from './migrations/sqlite-026-connectors.js';
import type { MigrationDatabase } from '../schema.js';
import { uuid, ts } from './sqlite-checks.js';


async function exec(tx: Transaction<MigrationDatabase>, statements: readonly string[]): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(tx);
}

/** SQLite schema history; mirror of `postgres-migrations.ts`, same versions and names. */
export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'tenants_and_agents',
    up: (tx) =>
      exec(tx, [
        // STRICT (SQLite ≥ 3.37) rejects values of the wrong storage class instead of coercing them.
        `create table tenants (
          id text primary key check (${uuid('id')}),
          name text not null,
          region text not null,
          status text not null check (status in ('active', 'suspended')),
          created_at text not null check (${ts('created_at')}),
          deleted_at text check (deleted_at is null or ${ts('deleted_at')})
        ) strict`,
        `create table agents (
          id text primary key check (${uuid('id')}),
          tenant_id text not null references tenants (id) check (${uuid('tenant_id')}),
          name text not null,
          kind text not null,
          external_id text not null default '',
          status text not null,
          version integer not null default 1 check (version >= 1),
          created_at text not null check (${ts('created_at')}),
          updated_at text not null check (${ts('updated_at')})
        ) strict`,
        `create unique index agents_tenant_external_id_key on agents (tenant_id, external_id) where external_id <> ''`,
        `create index agents_tenant_id_idx on agents (tenant_id, id)`,
      ]),
  },
  // One file per area and number, so areas can add tables without touching each other.
  ...SQLITE_MIGRATION_002_IDENTITY,
  ...SQLITE_MIGRATION_003_LEDGER,
  ...SQLITE_MIGRATION_004_WEBAUTHN,
  ...SQLITE_MIGRATION_005_ACCESSMAP,
  ...SQLITE_MIGRATION_006_INGEST,
  ...SQLITE_MIGRATION_007_AUDIT_INTENTS,
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
  ...SQLITE_MIGRATION_019_AUDIT_HEADS_FORWARD,
  ...SQLITE_MIGRATION_020_RESERVED,
  ...SQLITE_MIGRATION_021_SECURITY_FINDINGS,
  ...SQLITE_MIGRATION_022_GOVERNANCE,
  ...SQLITE_MIGRATION_023_EVENTING,
  ...SQLITE_MIGRATION_024_CONSOLE,
  ...SQLITE_MIGRATION_025_COMPLIANCE,
  ...SQLITE_MIGRATION_028_CLAUDE_POLICY,
  ...SQLITE_MIGRATION_027_REPLICAS,
  ...SQLITE_MIGRATION_029_LEDGER_ERASURE,
  ...SQLITE_MIGRATION_026_CONNECTORS,
  ...SQLITE_MIGRATION_030_EGRESS_FENCE,
  ...SQLITE_MIGRATION_031_REPLICA_LIMITS,
  ...SQLITE_MIGRATION_032_CONNECTOR_SYSTEM_LANE,
];
