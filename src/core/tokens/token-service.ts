/**
 * API keys (`svck_…`): issue, list, revoke, rotate. Who may manage a key: its owner; a superadmin;
 * an admin (or owner) of the tenant a key is bound to. Anyone else gets 404 for it, never 403
 * (DECISIONS.md: no existence oracle). An API key bound to a tenant manages only keys of that
 * tenant, so a narrow key cannot reach its owner's other keys.
 */
import type { Transaction } from 'kysely';
import { ApiError, errors } from '../../contract/errors.js';
import { nowTimestamp, timestampFromDate } from '../../ledger/time.js';
import { normalizeRfc3339 } from '../../contract/rfc3339.js';
import { parseTtl } from '../../auth/token-ttl.js';
import { uuid7 } from '../../ledger/uuid7.js';
import type { Database } from '../../store/schema.js';
import type { Store } from '../../store/store-types.js';
import type { RecordHooks } from '../../contract/record-hooks.js';
import type { ApiTokensTable } from '../../store/schema-identity.js';
import { mintToken } from '../../auth/opaque-token.js';
import { grantIn, type Principal } from '../../auth/principal.js';
import { isRole, roleAtLeast, type Role } from '../../auth/roles.js';
import type { EventInput } from '../../events/event-types.js';

/** An API key as listed (no secret). */
export interface TokenView {
  id: string;
  name: string;
  user_id: string;
  role: Role;
  tenant: string | null;
  superadmin: boolean;
  created_at: string;
  expires_at: string | null;
  rotated_from: string | null;
}

/** An API key just issued: the only time its secret is shown. */
export interface IssuedToken extends TokenView {
  token: string;
}

/** What a new key is made of (also what rotation copies). */
export interface TokenSpec {
  userId: string;
  name: string;
  role: Role;
  tenant: string | null;
  superadmin: boolean;
  expiresAt: string | null;
  rotatedFrom?: string | null;
}

/** Strip a row to the listed view. */
export function tokenView(row: ApiTokensTable): TokenView {
  return {
    id: row.id,
    name: row.name,
    user_id: row.user_id,
    role: isRole(row.role) ? row.role : 'viewer',
    tenant: row.org_id,
    superadmin: row.superadmin === 1,
    created_at: row.created_at,
    expires_at: row.expires_at,
    rotated_from: row.rotated_from,
  };
}

/** Insert a key; the returned text is the only copy of the secret. */
export async function insertToken(tx: Transaction<Database>, spec: TokenSpec): Promise<IssuedToken> {
  const minted = mintToken('api_key');
  const row: ApiTokensTable = {
    id: uuid7(),
    selector: minted.selector,
    secret_hash: minted.secretHash,
    user_id: spec.userId,
    name: spec.name,
    role: spec.role,
    org_id: spec.tenant,
    superadmin: spec.superadmin ? 1 : 0,
    created_at: nowTimestamp(),
    expires_at: spec.expiresAt,
    revoked_at: null,
    rotated_from: spec.rotatedFrom ?? null,
  };
  await tx.insertInto('api_tokens').values(row).execute();
  return { ...tokenView(row), token: minted.token };
}

/** The caller's role in a tenant, as the role ceiling sees it (superadmin: owner anywhere). */
function ceilingIn(p: Principal, tenant: string): Role | undefined {
  const grant = grantIn(p, tenant);
  if (grant) return grant.role;
  return p.superadmin && p.boundTenant === null ? 'owner' : undefined;
}

/** The highest role the caller holds anywhere (ceiling of an unbound key). */
export function highestRole(p: Principal): Role | undefined {
  if (p.superadmin && p.boundTenant === null) return 'owner';
  let best: Role | undefined;
  for (const g of p.grants) if (!best || roleAtLeast(g.role, best)) best = g.role;
  return best;
}

/**
 * Who may issue (and rotate) API keys (issue 30 item 6): a person on a session, within the role
 * ceiling; an API key only when its own role where the new key will act is admin or above (an
 * editor's key cannot mint further keys), and the role ceiling holds as well.
 */
export function assertMayIssue(p: Principal, tenant: string | null): void {
  if (p.kind !== 'token') return;
  const role = tenant !== null ? ceilingIn(p, tenant) : highestRole(p);
  if (role === undefined || !roleAtLeast(role, 'admin'))
    throw new ApiError(
      'forbidden',
      'an API key may issue or rotate API keys only with the admin role or above; use a session, or an admin key',
    );
}

/**
 * The expiry of a new key: `expires_at` (any RFC 3339 form, normalised to UTC with 9 digits),
 * `ttl` (`90d`, `never`), or else now + the operator's default. A key issued by an API key that
 * expires never outlives it: the default is shortened to the issuer's expiry, and an explicit
 * later expiry (or `never`) is refused.
 */
export function expiryOf(p: Principal, body: { expires_at?: string; ttl?: string }, defaultTtlMs: number, nowMs: number): string | null {
  if (body.expires_at !== undefined && body.ttl !== undefined) throw errors.badRequest('give expires_at or ttl, not both');
  let expiresAt: string | null;
  let explicit = true;
  if (body.expires_at !== undefined) {
    const normal = normalizeRfc3339(body.expires_at);
    if (normal === undefined) throw errors.badRequest(`expires_at is not a valid RFC 3339 date-time: ${body.expires_at}`);
    expiresAt = normal;
  } else if (body.ttl !== undefined) {
    const ms = parseTtl(body.ttl);
    if (ms === undefined) throw errors.badRequest(`ttl must be a count and a unit (m, h, d, w) up to 100 years, or never; got ${body.ttl}`);
    expiresAt = ms === null ? null : timestampFromDate(new Date(nowMs + ms));
  } else {
    expiresAt = timestampFromDate(new Date(nowMs + defaultTtlMs));
    explicit = false;
  }
  if (expiresAt !== null && expiresAt <= timestampFromDate(new Date(nowMs))) throw errors.badRequest('expires_at must be in the future');
  const cap = p.kind === 'token' ? p.expiresAt : null;
  if (cap !== null && (expiresAt === null || expiresAt > cap)) {
    if (explicit) throw new ApiError('forbidden', `a key issued by an API key cannot outlive it (the issuing key expires ${cap})`);
    expiresAt = cap;
  }
  return expiresAt;
}

/** Throws 403 `role_ceiling` unless the caller may mint a key of this spec. */
export function assertCeiling(p: Principal, spec: Pick<TokenSpec, 'role' | 'tenant' | 'superadmin'>): void {
  if (spec.superadmin && !p.superadmin) throw new ApiError('role_ceiling', 'only superadmins mint superadmin tokens');
  const ceiling = spec.tenant !== null ? ceilingIn(p, spec.tenant) : highestRole(p);
  if (ceiling === undefined) throw new ApiError('forbidden', 'no access to this tenant');
  if (!roleAtLeast(ceiling, spec.role))
    throw new ApiError('role_ceiling', `cannot mint a ${spec.role} token above your own role (${ceiling})`);
}

/** True when the caller may see, revoke and rotate this key (else it is concealed as 404). */
export function canManage(p: Principal, row: Pick<ApiTokensTable, 'user_id' | 'org_id'>): boolean {
  if (p.boundTenant !== null && row.org_id !== p.boundTenant) return false;
  if (row.user_id === p.userId) return true;
  if (p.superadmin && p.boundTenant === null) return true;
  if (row.org_id === null) return false;
  const role = grantIn(p, row.org_id)?.role;
  return role !== undefined && roleAtLeast(role, 'admin');
}

/** A live (not revoked, not expired) key the caller may manage, or 404. */
export async function manageableToken(tx: Transaction<Database>, p: Principal, id: string): Promise<ApiTokensTable> {
  const row = await tx.selectFrom('api_tokens').selectAll().where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
  if (!row || (row.expires_at !== null && row.expires_at <= nowTimestamp()) || !canManage(p, row)) throw errors.notFound('token');
  return row;
}

/** Revoke a live key; false when a concurrent revoke/rotate got there first. */
export async function revokeToken(tx: Transaction<Database>, id: string): Promise<boolean> {
  const r = await tx
    .updateTable('api_tokens')
    .set({ revoked_at: nowTimestamp() })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/**
 * Runs the `delete` guards of a token before it is revoked (a legal hold on the token or on its
 * owner refuses with 409 `legal_hold`), in each tenant the token reaches: its bound tenant, or every
 * tenant its owner is a member of. Guards only read, so a separate transaction per tenant is enough.
 */
export async function guardTokenDelete(store: Store, hooks: RecordHooks, row: ApiTokensTable): Promise<void> {
  const tenants =
    row.org_id !== null
      ? [row.org_id]
      : (await store.transaction((tx) => tx.selectFrom('memberships').select('org_id').where('user_id', '=', row.user_id).execute())).map(
          (m) => m.org_id,
        );
  for (const tenant of tenants) {
    await store.withTenant(tenant, (tx) => hooks.run('delete', { store, tx, tenant, kind: 'token', id: row.id, record: { ...row } }));
  }
}

/** The tenants an API key's events are announced in: its bound tenant, or every tenant its owner is a member of. */
export async function tokenTenants(tx: Transaction<Database>, key: { tenant: string | null; user_id: string }): Promise<string[]> {
  if (key.tenant !== null) return [key.tenant];
  const rows = await tx.selectFrom('memberships').select('org_id').where('user_id', '=', key.user_id).execute();
  return [...new Set(rows.map((r) => r.org_id))].sort();
}

/** `token.issued|rotated|revoked` of one key, one event per tenant it reaches; never its secret. */
export async function tokenEvents(
  tx: Transaction<Database>,
  type: 'token.issued' | 'token.rotated' | 'token.revoked',
  key: TokenView,
): Promise<EventInput[]> {
  const data = {
    id: key.id,
    name: key.name,
    owner: key.user_id,
    role: key.role,
    tenant: key.tenant,
    superadmin: key.superadmin,
    expires_at: key.expires_at,
    ...(key.rotated_from ? { rotated_from: key.rotated_from } : {}),
  };
  return (await tokenTenants(tx, key)).map((tenant) => ({ type, tenant, subject: `token/${key.id}`, data }));
}
