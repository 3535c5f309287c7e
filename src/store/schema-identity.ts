/**
 * Kysely table types of the identity area (migration 2); merged into `Database` in schema.ts.
 *
 * All identity tables are global, on purpose: a credential is looked up before any tenant is
 * known, and a principal's grants span tenants. The tenant a membership or API key refers to is
 * therefore stored as `org_id`, not `tenant_id`: these rows are not tenant data confined by
 * row-level security (the start-up check requires RLS on every `tenant_id` column) but the
 * access-control list that decides which tenant binding a request may use (docs/auth.md).
 */

/** Booleans are stored as 0/1 on both backends so one Kysely type serves both. */
export type Flag = 0 | 1;

export type UserStatus = 'active' | 'disabled';

export interface UsersTable {
  id: string;
  /** lower-cased; unique */
  email: string;
  password_hash: string;
  superadmin: Flag;
  status: UserStatus;
  created_at: string;
  updated_at: string;
}

export interface MembershipsTable {
  user_id: string;
  org_id: string;
  role: string;
  created_at: string;
  updated_at: string;
}

export interface SessionsTable {
  id: string;
  selector: string;
  /** hex SHA-256 of the token's secret part */
  secret_hash: string;
  user_id: string;
  /** authenticator assurance level: 1 after a password login, 3 after a WebAuthn step-up */
  aal: number;
  /** when an AAL3 step-up lapses back to AAL1; null when never stepped up */
  aal_expires_at: string | null;
  /** authentication methods (RFC 8176), comma-separated, e.g. `pwd` or `pwd,hwk` */
  amr: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
}

export interface ApiTokensTable {
  id: string;
  selector: string;
  secret_hash: string;
  user_id: string;
  name: string;
  /** ceiling: the token never acts above this role, nor above its owner's membership */
  role: string;
  /** the one tenant the token is bound to, or null for the owner's memberships */
  org_id: string | null;
  superadmin: Flag;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  /** the token this one replaced by rotation */
  rotated_from: string | null;
}

/** One row at most (id = 1): the claim that makes exactly one of two concurrent setups win. */
export interface SetupClaimsTable {
  id: number;
  claimed_at: string;
}

/** Tables of the identity area. */
export interface IdentityTables {
  users: UsersTable;
  memberships: MembershipsTable;
  sessions: SessionsTable;
  api_tokens: ApiTokensTable;
  setup_claims: SetupClaimsTable;
}

/** identity tables with a `tenant_id` column (RLS on Postgres): none, see the file comment. */
export const IDENTITY_TENANT_TABLES = [] as const;

/** identity tables shared by all tenants. */
export const IDENTITY_GLOBAL_TABLES = ['users', 'memberships', 'sessions', 'api_tokens', 'setup_claims'] as const;

/** What the Postgres app role may do on the identity tables (merged into APP_ROLE_GRANTS). */
export const IDENTITY_APP_ROLE_GRANTS = {
  users: ['select', 'insert', 'update'],
  memberships: ['select', 'insert', 'update', 'delete'],
  sessions: ['select', 'insert', 'update'],
  api_tokens: ['select', 'insert', 'update'],
  setup_claims: ['select', 'insert'],
} as const satisfies Record<keyof IdentityTables, readonly ('select' | 'insert' | 'update' | 'delete')[]>;
