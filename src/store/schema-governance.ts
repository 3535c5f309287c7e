/** Kysely table types of the governance module (migration 22); merged into `Database` in schema.ts. */
import type { ColumnType } from 'kysely';

/** bigint on Postgres comes back as a string; written as a number. */
type BigInt64 = ColumnType<number | string, number, number>;

/** `gov_approvals`: one dual-control request; single use (consumed by the action it authorises). */
export interface GovApprovalsTable {
  id: string;
  tenant_id: string;
  action: string;
  subject: string;
  /** canonical JSON of the plan's params */
  params: string;
  /** hex SHA-256 of the RFC 8785 canonical JSON of {action, subject, params} */
  plan_hash: string;
  quorum: number;
  /** `pending`, `approved`, `rejected`, `cancelled`, `consumed` (`expired` is computed from expires_at) */
  status: string;
  reason: string;
  requested_by: string;
  requested_actor: string;
  expires_at: string;
  resolved_at: string | null;
  consumed_at: string | null;
  created_at: string;
  updated_at: string;
}

/** `gov_approval_decisions`: one per person (user id) and approval: the database refuses a second. */
export interface GovApprovalDecisionsTable {
  id: string;
  tenant_id: string;
  approval_id: string;
  user_id: string;
  /** the credential that decided (`user:<id>` or `token:<id>`) */
  actor: string;
  decision: string;
  reason: string;
  created_at: string;
}

/** `gov_policy_revisions`: immutable signed revisions, numbered per tenant and surface. */
export interface GovPolicyRevisionsTable {
  tenant_id: string;
  surface: string;
  revision: BigInt64;
  content: string;
  note: string;
  /** hex SHA-256 of the artifact (the content's UTF-8 bytes) */
  sha256: string;
  /** hex SHA-256 of the signing key's SPKI DER */
  key_fingerprint: string;
  /** base64 Ed25519 signature over the artifact bytes */
  signature: string;
  created_by: string;
  created_at: string;
}

/** `gov_policy_active`: the revision deciding per tenant and surface (publish and rollback move it). */
export interface GovPolicyActiveTable {
  tenant_id: string;
  surface: string;
  revision: BigInt64;
  updated_at: string;
}

/** `gov_kill_switches`: a row forces `deny` for the whole tenant (`scope` = `*`) or one agent. */
export interface GovKillSwitchesTable {
  tenant_id: string;
  scope: string;
  reason: string;
  created_by: string;
  created_at: string;
}

export interface GovernanceTables {
  gov_approvals: GovApprovalsTable;
  gov_approval_decisions: GovApprovalDecisionsTable;
  gov_policy_revisions: GovPolicyRevisionsTable;
  gov_policy_active: GovPolicyActiveTable;
  gov_kill_switches: GovKillSwitchesTable;
}

/** governance tables with a `tenant_id` column (RLS on Postgres). */
export const GOVERNANCE_TENANT_TABLES = [
  'gov_approvals',
  'gov_approval_decisions',
  'gov_policy_revisions',
  'gov_policy_active',
  'gov_kill_switches',
] as const;

/** governance tables shared by all tenants. */
export const GOVERNANCE_GLOBAL_TABLES = [] as const;

/**
 * What the Postgres app role may do (spread into APP_ROLE_GRANTS): revisions are never updated or deleted; decisions and kill
 * switches are updated only by an erasure, which redacts a person's identifiers from their reasons (docs/compliance.md).
 */
export const GOVERNANCE_APP_ROLE_GRANTS = {
  gov_approvals: ['select', 'insert', 'update'],
  gov_approval_decisions: ['select', 'insert', 'update'],
  gov_policy_revisions: ['select', 'insert'],
  gov_policy_active: ['select', 'insert', 'update'],
  gov_kill_switches: ['select', 'insert', 'update', 'delete'],
} as const satisfies Record<keyof GovernanceTables, readonly ('select' | 'insert' | 'update' | 'delete')[]>;
