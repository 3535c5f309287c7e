/** Kysely table types of the claude-policy and capabilities modules (migration 28); merged into `Database` in schema.ts. */
import type { ColumnType } from 'kysely';

/** bigint on Postgres comes back as a string; written as a number. */
type BigInt64 = ColumnType<number | string, number, number>;

/**
 * `cp_checkins`: what a host last reported for one managed-settings surface (one row per tenant,
 * surface and host, replaced on every check-in). The published revisions themselves live in the
 * governance module's signed revisions (surface `claude:<surface>`).
 */
export interface CpCheckinsTable {
  tenant_id: string;
  surface: string;
  host: string;
  /** hex SHA-256 of the bytes the host holds */
  sha256: string;
  /** the published revision those bytes are, or null when they match none */
  revision: BigInt64 | null;
  /** 1 when the bytes are a revision signed by the current policy-signing key */
  verified: number;
  reason: string;
  checked_in_by: string;
  checked_in_at: string;
}

/** `cap_configs`: an MCP server or tool configuration; `document` is its current revision's JSON (secret references only). */
export interface CapConfigsTable {
  id: string;
  tenant_id: string;
  name: string;
  /** `mcp_server` or `tool` */
  kind: string;
  revision: BigInt64;
  document: string;
  created_by: string;
  created_at: string;
  updated_at: string;
  /** set by DELETE; the name is free again, the revisions stay */
  deleted_at: string | null;
}

/** `cap_config_revisions`: every change of a configuration (create, replace, delete), immutable. */
export interface CapConfigRevisionsTable {
  tenant_id: string;
  config_id: string;
  revision: BigInt64;
  /** `create`, `replace` or `delete` */
  change: string;
  document: string;
  actor: string;
  created_at: string;
}

/**
 * `cap_secret_refs`: a global index of which configuration references which console secret, so the
 * secrets store (global, superadmin) can list its references without reading tenant tables. The
 * column is `owner_tenant`, not `tenant_id`: this table is global on purpose and holds names only.
 */
export interface CapSecretRefsTable {
  owner_tenant: string;
  config_id: string;
  config_name: string;
  secret_name: string;
}

export interface ClaudePolicyTables {
  cp_checkins: CpCheckinsTable;
  cap_configs: CapConfigsTable;
  cap_config_revisions: CapConfigRevisionsTable;
  cap_secret_refs: CapSecretRefsTable;
}

/** tables with a `tenant_id` column (RLS on Postgres). */
export const CLAUDE_POLICY_TENANT_TABLES = ['cp_checkins', 'cap_configs', 'cap_config_revisions'] as const;

/** tables shared by all tenants. */
export const CLAUDE_POLICY_GLOBAL_TABLES = ['cap_secret_refs'] as const;

/** What the Postgres app role may do (spread into APP_ROLE_GRANTS): revisions are never updated or deleted. */
export const CLAUDE_POLICY_APP_ROLE_GRANTS = {
  cp_checkins: ['select', 'insert', 'update'],
  cap_configs: ['select', 'insert', 'update'],
  cap_config_revisions: ['select', 'insert'],
  cap_secret_refs: ['select', 'insert', 'delete'],
} as const satisfies Record<keyof ClaudePolicyTables, readonly ('select' | 'insert' | 'update' | 'delete')[]>;
