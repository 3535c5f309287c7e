/**
 * The SSO (OpenID Connect) provider the console stores under `console_settings.sso`: issuer,
 * client id, the client secret as a reference into the sealed secrets store (never the value),
 * scopes, claim → role and tenant mapping, allowed e-mail domains. The reference is listed by
 * `GET /v1/console/secrets`, and deleting that secret makes SSO login fail closed.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../store/schema.js';
import { registerSecretReferences, secretNameOf, type SecretReference } from './secrets-service.js';

export interface SsoRoleRule {
  /** claim name in the ID token (e.g. `groups`) */
  claim: string;
  /** the value the claim must equal or contain (arrays) */
  value: string;
  /** tenant granted; the role applies there */
  tenant: string;
  role: 'viewer' | 'editor' | 'admin' | 'owner';
}

export interface SsoSettings {
  issuer: string;
  client_id: string;
  /** `secret:<name>` in the sealed secrets store; absent for a public client (PKCE only) */
  client_secret_ref: string | null;
  scopes: string[];
  role_mapping: SsoRoleRule[];
  /** lower-case domains; empty = any domain */
  allowed_domains: string[];
  /** refuse password login for users this provider provisioned */
  disable_password_login: boolean;
  /** acr values the provider uses for phishing-resistant MFA; such a login is AAL3 (docs/sso.md) */
  aal3_acr_values: string[];
  /**
   * Whether a first SSO login may link an existing account with the same e-mail (verified by the
   * provider, equal after ASCII case folding). Off by default: without it such a login is refused.
   */
  link_existing_accounts: boolean;
  /** https redirect URIs registered at the provider besides the CLI's loopback callback, matched exactly */
  redirect_uris: string[];
}

/** Stored settings with the fields added later at their defaults (a configuration saved before them). */
export function ssoSettingsOf(value: Partial<SsoSettings> & Pick<SsoSettings, 'issuer' | 'client_id'>): SsoSettings {
  return {
    issuer: value.issuer,
    client_id: value.client_id,
    client_secret_ref: value.client_secret_ref ?? null,
    scopes: value.scopes ?? ['openid', 'email', 'profile'],
    role_mapping: value.role_mapping ?? [],
    allowed_domains: value.allowed_domains ?? [],
    disable_password_login: value.disable_password_login ?? false,
    aal3_acr_values: value.aal3_acr_values ?? [],
    link_existing_accounts: value.link_existing_accounts ?? false,
    redirect_uris: value.redirect_uris ?? [],
  };
}

async function ssoReferences(tx: Transaction<Database>): Promise<SecretReference[]> {
  const row = await tx.selectFrom('console_settings').select('value').where('key', '=', 'sso').executeTakeFirst();
  if (!row) return [];
  const s = JSON.parse(row.value) as SsoSettings;
  return s.client_secret_ref ? [{ secret: secretNameOf(s.client_secret_ref), by: 'sso' }] : [];
}

registerSecretReferences(ssoReferences);
