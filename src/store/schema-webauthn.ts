/**
 * Kysely table types of the WebAuthn step-up area (migration 4); merged into `Database` in schema.ts.
 * Both tables are global like the identity tables they hang off (a credential belongs to a user,
 * and users span tenants): no `tenant_id`, no row-level security.
 */
import type { ColumnType } from 'kysely';

/** A registered authenticator (W3C WebAuthn Level 3 §6.1 "credential record"). */
export interface WebauthnCredentialsTable {
  id: string;
  user_id: string;
  /** base64url credential id as the authenticator returned it; unique */
  credential_id: string;
  /** base64url COSE public key (RFC 9053 key as the attestation carried it) */
  public_key: string;
  /** signature counter (§6.1.1); bigint on Postgres comes back as a string */
  sign_count: ColumnType<number | string, number, number>;
  /** comma-separated AuthenticatorTransport values, e.g. `internal,hybrid` */
  transports: string;
  /** label the user gave it */
  name: string;
  /** `singleDevice` or `multiDevice` (backup eligibility, §6.1 flags BE) */
  device_type: string;
  backed_up: 0 | 1;
  created_at: string;
  last_used_at: string | null;
}

/** One outstanding ceremony challenge (§13.4.3: single use, short-lived, bound to the session). */
export interface WebauthnChallengesTable {
  id: string;
  user_id: string;
  session_id: string;
  purpose: 'register' | 'step_up';
  /** base64url challenge as sent in the options */
  challenge: string;
  created_at: string;
  expires_at: string;
}

/** Tables of the WebAuthn area. */
export interface WebauthnTables {
  webauthn_credentials: WebauthnCredentialsTable;
  webauthn_challenges: WebauthnChallengesTable;
}

/** WebAuthn tables with a `tenant_id` column: none. */
export const WEBAUTHN_TENANT_TABLES = [] as const;

/** WebAuthn tables shared by all tenants. */
export const WEBAUTHN_GLOBAL_TABLES = ['webauthn_credentials', 'webauthn_challenges'] as const;

/** What the Postgres app role may do on the WebAuthn tables (merged into APP_ROLE_GRANTS). */
export const WEBAUTHN_APP_ROLE_GRANTS = {
  webauthn_credentials: ['select', 'insert', 'update', 'delete'],
  webauthn_challenges: ['select', 'insert', 'delete'],
} as const satisfies Record<keyof WebauthnTables, readonly ('select' | 'insert' | 'update' | 'delete')[]>;
