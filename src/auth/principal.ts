/** The authenticated caller as every handler sees it (`ctx.principal`). */
import type { Role } from './roles.js';

/** A tenant the principal may act in, with the effective role there. */
export interface Grant {
  tenant: string;
  role: Role;
}

export interface Principal {
  /** whoami `kind`: a person on a session, or an API key */
  kind: 'user' | 'token';
  userId: string;
  /** ledger actor: `user:<id>` for sessions, `token:<id>` for API keys (DECISIONS.md) */
  actor: string;
  actorKind: 'user' | 'token';
  /** the session id or the API token id */
  credentialId: string;
  /** the user's flag, and for an API key also the key's own flag */
  superadmin: boolean;
  /** sessions: 1, or 3 while a step-up lasts; API keys never exceed 1 */
  aal: number;
  /** when the AAL3 step-up lapses */
  aalExpiresAt: string | null;
  /** RFC 8176 authentication methods of a session */
  amr: string[];
  /** an API key bound to one tenant */
  boundTenant: string | null;
  /** an API key's role ceiling */
  roleCeiling: Role | null;
  /** effective roles per live tenant (memberships, capped by the key's ceiling and binding) */
  grants: Grant[];
  /** when the credential itself expires */
  expiresAt: string | null;
}

/** The grant of a principal in one tenant, if any. */
export function grantIn(principal: Principal, tenant: string): Grant | undefined {
  return principal.grants.find((g) => g.tenant === tenant);
}
