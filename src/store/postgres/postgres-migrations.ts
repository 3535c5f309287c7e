import { sql, type Transaction } from 'kysely';
import type { Migration } from '../migrations.js';
import { POSTGRES_MIGRATION_002_IDENTITY } from './migrations/postgres-002-identity.js';
import { POSTGRES_MIGRATION_003_LEDGER } from './migrations/postgres-003-ledger.js';
import { POSTGRES_MIGRATION_004_WEBAUTHN } from './migrations/postgres-004-webauthn.js';
import { POSTGRES_MIGRATION_005_ACCESSMAP } from './migrations/postgres-005-accessmap.js';
import { POSTGRES_MIGRATION_006_INGEST } from './migrations/postgres-006-ingest.js';
import { POSTGRES_MIGRATION_007_AUDIT_INTENTS } from './migrations/postgres-007-audit-intents.js';
import { POSTGRES_MIGRATION_008_ACCESSMAP_KEYS } from './migrations/postgres-008-accessmap-keys.js';
import { POSTGRES_MIGRATION_009_ACCESSMAP_LINKING } from './migrations/postgres-009-accessmap-linking.js';
import { POSTGRES_MIGRATION_010_ACCESSMAP_NUMBERS } from './migrations/postgres-010-accessmap-numbers.js';
import { POSTGRES_MIGRATION_011_ACCESSMAP_NUMBER_COVER } from './migrations/postgres-011-accessmap-number-cover.js';
import { POSTGRES_MIGRATION_012_ACCESSMAP_DROP_NUMBER_COVER } from './migrations/postgres-012-accessmap-drop-number-cover.js';
import { POSTGRES_MIGRATION_013_ACCESSMAP_LINKING_NUMBERS } from './migrations/postgres-013-accessmap-linking-numbers.js';
import { POSTGRES_MIGRATION_014_ACCESSMAP_EDGE_SEQ } from './migrations/postgres-014-accessmap-edge-seq.js';
import { POSTGRES_MIGRATION_015_ACCESSMAP_NODE_LOOKUP_COVER } from './migrations/postgres-015-accessmap-node-lookup-cover.js';
import { POSTGRES_MIGRATION_016_ACCESSMAP_LEVEL_OPS } from './migrations/postgres-016-accessmap-level-ops.js';
import { POSTGRES_MIGRATION_017_ACCESSMAP_LEVEL_SEQ } from './migrations/postgres-017-accessmap-level-seq.js';
import { POSTGRES_MIGRATION_018_ACCESSMAP_NODE_EPOCH } from './migrations/postgres-018-accessmap-node-epoch.js';
import { POSTGRES_MIGRATION_019_AUDIT_HEADS_FORWARD } from './migrations/postgres-019-audit-heads-forward.js';
import { POSTGRES_MIGRATION_020_RESERVED } from './migrations/postgres-020-reserved.js';
import { POSTGRES_MIGRATION_021_SECURITY_FINDINGS } from './migrations/postgres-021-security-findings.js';
import { POSTGRES_MIGRATION_022_GOVERNANCE } from './migrations/postgres-022-governance.js';
import { POSTGRES_MIGRATION_023_EVENTING } from './migrations/postgres-023-eventing.js';
import { POSTGRES_MIGRATION_024_CONSOLE } from './migrations/postgres-024-console.js';
import { POSTGRES_MIGRATION_025_COMPLIANCE } from './migrations/postgres-025-compliance.js';
import { POSTGRES_MIGRATION_028_CLAUDE_POLICY } from './migrations/postgres-028-claude-policy.js';
import { POSTGRES_MIGRATION_027_REPLICAS } from './migrations/postgres-027-replicas.js';
import { POSTGRES_MIGRATION_029_LEDGER_ERASURE } from './migrations/postgres-029-ledger-erasure.js';
import { POSTGRES_MIGRATION_030_EGRESS_FENCE } from './migrations/postgres-030-egress-fence.js';
import { POSTGRES_MIGRATION_031_REPLICA_LIMITS } from './migrations/postgres-031-replica-limits.js';
import { POSTGRES_MIGRATION_032_CONNECTOR_SYSTEM_LANE } from './migrations/postgres-032-connector-system-lane.js';
import { POSTGRES_MIGRATION_026_CONNECTORS } from './migrations/postgres-026-connectors.js';
import type { MigrationDatabase } from '../schema.js';
import { tenantIsolationDdl } from './postgres-roles.js';

// 9-digit RFC 3339 UTC text (DECISIONS.md); kept as text because it is what the ledger hashes,
// and in this fixed-width form text order equals time order.
const ts = (col: string): string => `${col} ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{9}Z$'`;

async function exec(tx: Transaction<MigrationDatabase>, statements: readonly string[]): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(tx);
}

/**
 * Postgres schema history; mirror of `sqlite-migrations.ts`, same versions and names.
 * Role creation and grants are re-applied after every run (postgres-roles.ts), so a step only
 * creates its tables and, for a tenant table, calls `tenantIsolationDdl`.
 */
export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'tenants_and_agents',
    up: (tx) =>
      exec(tx, [
        `create table tenants (
          id uuid primary key,
          name text not null,
          region text not null,
          status text not null check (status in ('active', 'suspended')),
          created_at text not null check (${ts('created_at')}),
          deleted_at text check (deleted_at is null or ${ts('deleted_at')})
        )`,
        `create table agents (
          id uuid primary key,
          tenant_id uuid not null references tenants (id),
          name text not null,
          kind text not null,
          external_id text not null default '',
          status text not null,
          version integer not null default 1 check (version >= 1),
          created_at text not null check (${ts('created_at')}),
          updated_at text not null check (${ts('updated_at')})
        )`,
        `create unique index agents_tenant_external_id_key on agents (tenant_id, external_id) where external_id <> ''`,
        `create index agents_tenant_id_idx on agents (tenant_id, id)`,
        ...tenantIsolationDdl('agents'),
      ]),
  },
  // One file per area and number, so areas can add tables without touching each other.
  ...POSTGRES_MIGRATION_002_IDENTITY,
  ...POSTGRES_MIGRATION_003_LEDGER,
  ...POSTGRES_MIGRATION_004_WEBAUTHN,
  ...POSTGRES_MIGRATION_005_ACCESSMAP,
  ...POSTGRES_MIGRATION_006_INGEST,
  ...POSTGRES_MIGRATION_007_AUDIT_INTENTS,
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
  ...POSTGRES_MIGRATION_019_AUDIT_HEADS_FORWARD,
  ...POSTGRES_MIGRATION_020_RESERVED,
  ...POSTGRES_MIGRATION_021_SECURITY_FINDINGS,
  ...POSTGRES_MIGRATION_022_GOVERNANCE,
  ...POSTGRES_MIGRATION_023_EVENTING,
  ...POSTGRES_MIGRATION_024_CONSOLE,
  ...POSTGRES_MIGRATION_025_COMPLIANCE,
  ...POSTGRES_MIGRATION_028_CLAUDE_POLICY,
  ...POSTGRES_MIGRATION_027_REPLICAS,
  ...POSTGRES_MIGRATION_029_LEDGER_ERASURE,
  ...POSTGRES_MIGRATION_026_CONNECTORS,
  ...POSTGRES_MIGRATION_030_EGRESS_FENCE,
  ...POSTGRES_MIGRATION_031_REPLICA_LIMITS,
  ...POSTGRES_MIGRATION_032_CONNECTOR_SYSTEM_LANE,
];
