/** Kysely table types of the service database, shared by the SQLite and Postgres backends. */
import { IDENTITY_GLOBAL_TABLES, IDENTITY_TENANT_TABLES, type IdentityTables } from './schema-identity.js';
import { ACCESSMAP_GLOBAL_TABLES, ACCESSMAP_TENANT_TABLES, type AccessmapTables } from './schema-accessmap.js';
import { LEDGER_GLOBAL_TABLES, LEDGER_TENANT_TABLES, type LedgerTables } from './schema-ledger.js';
import { WEBAUTHN_GLOBAL_TABLES, WEBAUTHN_TENANT_TABLES, type WebauthnTables } from './schema-webauthn.js';
import { INGEST_GLOBAL_TABLES, INGEST_TENANT_TABLES, type IngestTables } from './schema-ingest.js';
import { GOVERNANCE_GLOBAL_TABLES, GOVERNANCE_TENANT_TABLES, type GovernanceTables } from './schema-governance.js';
import { SECURITY_GLOBAL_TABLES, SECURITY_TENANT_TABLES, type SecurityTables } from './schema-security.js';
import { EVENTING_GLOBAL_TABLES, EVENTING_TENANT_TABLES, type EventingTables } from './schema-eventing.js';
import { CONSOLE_GLOBAL_TABLES, CONSOLE_TENANT_TABLES, type ConsoleTables } from './schema-console.js';
import { COMPLIANCE_GLOBAL_TABLES, COMPLIANCE_TENANT_TABLES, type ComplianceTables } from './schema-compliance.js';
import { CLAUDE_POLICY_GLOBAL_TABLES, CLAUDE_POLICY_TENANT_TABLES, type ClaudePolicyTables } from './schema-claude-policy.js';
import { REPLICA_GLOBAL_TABLES, type ReplicaTables } from './schema-replicas.js';
import { CONNECTOR_GLOBAL_TABLES, CONNECTOR_TENANT_TABLES, type ConnectorTables } from './schema-connectors.js';

/** Lifecycle of a tenant; a suspended tenant keeps reads but refuses mutations (DECISIONS.md). */
export type TenantStatus = 'active' | 'suspended';

/** `tenants`: a global table (no tenant_id, no row-level security). */
export interface TenantsTable {
  /** lowercase UUID (v7 by convention) */
  id: string;
  name: string;
  region: string;
  status: TenantStatus;
  /** RFC 3339 UTC with exactly 9 fractional digits, e.g. `2026-06-02T10:00:00.000000000Z` */
  created_at: string;
  deleted_at: string | null;
}

/** `agents`: a tenant table; on Postgres every row is confined by the `tenant_isolation` policy. */
export interface AgentsTable {
  id: string;
  tenant_id: string;
  name: string;
  kind: string;
  /** `''` when the agent has no external identity; unique per tenant otherwise */
  external_id: string;
  status: string;
  /** optimistic-concurrency counter, starts at 1 */
  version: number;
  created_at: string;
  updated_at: string;
}

/** Every table the application code may touch; `schema_migrations` is deliberately absent. */
export interface Database
  extends
    IdentityTables,
    LedgerTables,
    AccessmapTables,
    WebauthnTables,
    IngestTables,
    GovernanceTables,
    SecurityTables,
    EventingTables,
    ConsoleTables,
    ComplianceTables,
    ClaudePolicyTables,
    ReplicaTables,
    ConnectorTables {
  tenants: TenantsTable;
  agents: AgentsTable;
}

/** Tables that carry a `tenant_id` column and must be isolated per tenant (RLS on Postgres). */
export const TENANT_TABLES = [
  'agents',
  ...IDENTITY_TENANT_TABLES,
  ...LEDGER_TENANT_TABLES,
  ...ACCESSMAP_TENANT_TABLES,
  ...WEBAUTHN_TENANT_TABLES,
  ...INGEST_TENANT_TABLES,
  ...GOVERNANCE_TENANT_TABLES,
  ...SECURITY_TENANT_TABLES,
  ...EVENTING_TENANT_TABLES,
  ...CONSOLE_TENANT_TABLES,
  ...COMPLIANCE_TENANT_TABLES,
  ...CLAUDE_POLICY_TENANT_TABLES,
  ...CONNECTOR_TENANT_TABLES,
] as const satisfies readonly (keyof Database)[];

/** Tables shared by all tenants, reachable from an unbound `transaction()`. */
export const GLOBAL_TABLES = [
  'tenants',
  ...IDENTITY_GLOBAL_TABLES,
  ...LEDGER_GLOBAL_TABLES,
  ...ACCESSMAP_GLOBAL_TABLES,
  ...WEBAUTHN_GLOBAL_TABLES,
  ...INGEST_GLOBAL_TABLES,
  ...GOVERNANCE_GLOBAL_TABLES,
  ...SECURITY_GLOBAL_TABLES,
  ...EVENTING_GLOBAL_TABLES,
  ...CONSOLE_GLOBAL_TABLES,
  ...COMPLIANCE_GLOBAL_TABLES,
  ...CLAUDE_POLICY_GLOBAL_TABLES,
  ...REPLICA_GLOBAL_TABLES,
  ...CONNECTOR_GLOBAL_TABLES,
] as const satisfies readonly (keyof Database)[];

/** Bookkeeping of applied migrations; only the migration runner reads it, as the connecting user. */
export interface SchemaMigrationsTable {
  version: number;
  name: string;
  applied_at: string;
}

/** The migration runner's view of the database. */
export interface MigrationDatabase {
  schema_migrations: SchemaMigrationsTable;
}
