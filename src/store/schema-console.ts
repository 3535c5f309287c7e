/**
 * Kysely table types of the console area (migration 24): the sealed secrets store, console
 * settings (SSO provider, license) and the link of SSO subjects to users. All global: they are
 * server administration, reached only by `system:admin` routes and the SSO login flow.
 */
import type { ColumnType } from 'kysely';
import type { Flag } from './schema-identity.js';

/** A named secret, sealed with the server's sealing key and its own id as associated data. */
export interface ConsoleSecretsTable {
  id: string;
  /** unique; what a reference (`secret:<name>`) names */
  name: string;
  /** `sv1:<key id>:<base64url>` (src/secrets/sealing.ts) */
  sealed: string;
  /** last four characters at most; '' for short values */
  hint: string;
  created_at: string;
  updated_at: string;
}

/** One JSON document per key (`sso`, `license`); never holds a secret value (references only). */
export interface ConsoleSettingsTable {
  key: string;
  value: string;
  updated_at: string;
}

/** A user provisioned by (or linked to) an OpenID provider's subject. */
export interface SsoIdentitiesTable {
  user_id: string;
  issuer: string;
  subject: string;
  /** 1: password login is refused for this user (SSO only) */
  password_disabled: Flag;
  created_at: string;
  last_login_at: string;
}

/**
 * A single sign-on login started and not yet completed (migration 34): kept in the database so any
 * replica completes it; consumed (deleted) by its completion, bounded per client address and overall.
 */
export interface SsoPendingLoginsTable {
  /** SHA-256 hex of the `state`: the table alone never gives a usable state */
  state_digest: string;
  /** the client address the start came from (an IPv6 address by its /64), the key of the per-address bound */
  client: string;
  issuer: string;
  redirect_uri: string;
  nonce: string;
  /** the PKCE verifier (useless without the code the provider hands to the browser) */
  verifier: string;
  created_at_ms: ColumnType<number | string, number, number>;
}

export interface ConsoleTables {
  console_secrets: ConsoleSecretsTable;
  console_settings: ConsoleSettingsTable;
  sso_identities: SsoIdentitiesTable;
  sso_pending_logins: SsoPendingLoginsTable;
}

export const CONSOLE_TENANT_TABLES = [] as const;
export const CONSOLE_GLOBAL_TABLES = ['console_secrets', 'console_settings', 'sso_identities', 'sso_pending_logins'] as const;

/** What the Postgres app role may do on the console tables (merged into APP_ROLE_GRANTS). */
export const CONSOLE_APP_ROLE_GRANTS = {
  console_secrets: ['select', 'insert', 'update', 'delete'],
  console_settings: ['select', 'insert', 'update', 'delete'],
  sso_identities: ['select', 'insert', 'update', 'delete'],
  sso_pending_logins: ['select', 'insert', 'delete'],
} as const satisfies Record<keyof ConsoleTables, readonly ('select' | 'insert' | 'update' | 'delete')[]>;
