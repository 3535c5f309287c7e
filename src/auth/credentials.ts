/**
 * Bearer credential → Principal. The selector finds the row; the secret's SHA-256 is compared in
 * constant time, against a dummy digest when no row matched. Resolved principals are cached for
 * a few seconds per selector, with explicit invalidation on every identity change (runtime.ts).
 */
import { nowTimestamp } from '../ledger/time.js';
import type { IdentityRuntime } from './runtime.js';
import { parseToken, secretMatches, sha256Hex, digestsEqual } from './opaque-token.js';
import type { Grant, Principal } from './principal.js';
import { liveMemberships, findLiveTenant } from './identity-store.js';
import { isRole, minRole } from './roles.js';

/** Extract the token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1). */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer +([^\s]+) *$/i.exec(header);
  return m ? m[1] : undefined;
}

/** The principal of a presented token, or undefined when it is unknown, wrong, expired, revoked or its user disabled. */
export async function resolveCredential(runtime: IdentityRuntime, text: string): Promise<Principal | undefined> {
  const parsed = parseToken(text);
  if (!parsed) return undefined;
  const hit = runtime.cached(parsed.selector);
  if (hit) {
    const ok = digestsEqual(sha256Hex(parsed.secret), hit.secretHash);
    if (!ok || (hit.principal.kind === 'user') !== (parsed.kind === 'session')) return undefined;
    if (hit.principal.expiresAt !== null && hit.principal.expiresAt <= nowTimestamp()) return undefined;
    return hit.principal;
  }
  const now = nowTimestamp();
  const generation = runtime.cacheGeneration;
  const loaded = await runtime.store.transaction(async (tx) => {
    if (parsed.kind === 'session') {
      const row = await tx
        .selectFrom('sessions')
        .innerJoin('users', 'users.id', 'sessions.user_id')
        .select([
          'sessions.id',
          'sessions.secret_hash',
          'sessions.user_id',
          'sessions.aal',
          'sessions.aal_expires_at',
          'sessions.amr',
          'sessions.expires_at',
          'sessions.revoked_at',
          'users.superadmin',
          'users.status',
        ])
        .where('sessions.selector', '=', parsed.selector)
        .executeTakeFirst();
      if (!secretMatches(parsed.secret, row?.secret_hash) || !row) return undefined;
      if (row.revoked_at !== null || row.expires_at <= now || row.status !== 'active') return undefined;
      const grants: Grant[] = await liveMemberships(tx, row.user_id);
      const principal: Principal = {
        kind: 'user',
        userId: row.user_id,
        actor: `user:${row.user_id}`,
        actorKind: 'user',
        credentialId: row.id,
        superadmin: row.superadmin === 1,
        aal: Number(row.aal),
        aalExpiresAt: row.aal_expires_at,
        amr: row.amr.split(',').filter(Boolean),
        boundTenant: null,
        roleCeiling: null,
        grants,
        expiresAt: row.expires_at,
      };
      return { principal, secretHash: row.secret_hash };
    }
    const row = await tx
      .selectFrom('api_tokens')
      .innerJoin('users', 'users.id', 'api_tokens.user_id')
      .select([
        'api_tokens.id',
        'api_tokens.secret_hash',
        'api_tokens.user_id',
        'api_tokens.role',
        'api_tokens.org_id',
        'api_tokens.superadmin as token_superadmin',
        'api_tokens.expires_at',
        'api_tokens.revoked_at',
        'users.superadmin',
        'users.status',
      ])
      .where('api_tokens.selector', '=', parsed.selector)
      .executeTakeFirst();
    if (!secretMatches(parsed.secret, row?.secret_hash) || !row) return undefined;
    if (row.revoked_at !== null || (row.expires_at !== null && row.expires_at <= now) || row.status !== 'active' || !isRole(row.role))
      return undefined;
    const ceiling = row.role;
    if (row.org_id !== null && !(await findLiveTenant(tx, row.org_id))) return undefined;
    const memberships = await liveMemberships(tx, row.user_id);
    const grants = memberships
      .filter((m) => row.org_id === null || m.tenant === row.org_id)
      .map((m) => ({ tenant: m.tenant, role: minRole(m.role, ceiling) }));
    const principal: Principal = {
      kind: 'token',
      userId: row.user_id,
      actor: `token:${row.id}`,
      actorKind: 'token',
      credentialId: row.id,
      // A superadmin key needs a superadmin owner at use time: demoting the user demotes the key.
      superadmin: row.token_superadmin === 1 && row.superadmin === 1,
      aal: 1,
      aalExpiresAt: null,
      amr: [],
      boundTenant: row.org_id,
      roleCeiling: ceiling,
      grants,
      expiresAt: row.expires_at,
    };
    return { principal, secretHash: row.secret_hash };
  });
  if (!loaded) return undefined;
  runtime.remember(parsed.selector, loaded.secretHash, loaded.principal, generation);
  return loaded.principal;
}
