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
}

async function ssoReferences(tx: Transaction<Database>): Promise<SecretReference[]> {
  const row = await tx.selectFrom('console_settings').select('value').where('key', '=', 'sso').executeTakeFirst();
  if (!row) return [];
  const s = JSON.parse(row.value) as SsoSettings;
  return s.client_secret_ref ? [{ secret: secretNameOf(s.client_secret_ref), by: 'sso' }] : [];
}

registerSecretReferences(ssoReferences);
