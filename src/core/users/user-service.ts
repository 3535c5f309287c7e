/** Users: creation within a tenant, disable/enable with the last-superadmin guard. */
import type { Transaction } from 'kysely';
import { ApiError, errors } from '../../contract/errors.js';
import { nowTimestamp } from '../../ledger/time.js';
import { uuid7 } from '../../ledger/uuid7.js';
import type { Database } from '../../store/schema.js';
import type { StoreCapabilities } from '../../store/store-types.js';
import { findUser, findUserByEmail, normalizeEmail, revokeAllCredentials, userView, type UserView } from '../../auth/identity-store.js';
import type { Role } from '../../auth/roles.js';
import type { EventInput } from '../../events/event-types.js';

/** Insert a user and its membership in `tenant`; 409 when the e-mail is taken. */
export async function insertUser(
  tx: Transaction<Database>,
  input: { email: string; passwordHash: string; superadmin: boolean; tenant: string; role: Role },
): Promise<UserView> {
  const email = normalizeEmail(input.email);
  if (await findUserByEmail(tx, email))
    throw errors.conflict('a user with this e-mail already exists; add it to the tenant with POST /v1/memberships');
  const at = nowTimestamp();
  const row = {
    id: uuid7(),
    email,
    password_hash: input.passwordHash,
    superadmin: input.superadmin ? (1 as const) : (0 as const),
    status: 'active' as const,
    created_at: at,
    updated_at: at,
  };
  await tx.insertInto('users').values(row).execute();
  await tx
    .insertInto('memberships')
    .values({ user_id: row.id, org_id: input.tenant, role: input.role, created_at: at, updated_at: at })
    .execute();
  return userView(row);
}

/**
 * Set a user's status. Disabling revokes every session and API key in the same transaction, and
 * refuses (409 `last_superadmin`) to disable the last active superadmin. The active superadmin
 * rows are locked first where the backend has concurrent writers, so two concurrent disables of
 * the last two superadmins cannot both pass the count.
 */
export async function setUserStatus(
  tx: Transaction<Database>,
  caps: StoreCapabilities,
  id: string,
  status: 'active' | 'disabled',
): Promise<{ user: UserView; changed: boolean; revoked?: { sessions: number; tokens: number } }> {
  const current = await findUser(tx, id);
  if (!current) throw errors.notFound('user');
  if (current.status === status) return { user: userView(current), changed: false };
  let revoked: { sessions: number; tokens: number } | undefined;
  if (status === 'disabled') {
    if (current.superadmin === 1) {
      let q = tx.selectFrom('users').select('id').where('superadmin', '=', 1).where('status', '=', 'active');
      if (caps.supportsConcurrentWriters) q = q.forUpdate();
      const active = await q.execute();
      if (active.length <= 1) throw new ApiError('last_superadmin');
    }
    revoked = await revokeAllCredentials(tx, id, nowTimestamp());
  }
  const at = nowTimestamp();
  await tx.updateTable('users').set({ status, updated_at: at }).where('id', '=', id).execute();
  return { user: userView({ ...current, status, updated_at: at }), changed: true, revoked };
}

/** What {@link tombstoneUser} did. */
export type UserTombstone =
  | { erased: true; email: string }
  | { erased: false; reason: string };

/**
 * Erasure of a user's personal fields (docs/compliance.md): the e-mail is replaced by a tombstone
 * `erased-<id>@erased.invalid`, the password hash by one that matches nothing, the user disabled and
 * every session and API key revoked. The row (its id, which the ledger's `actor` values name) stays.
 * Only a user whose one membership is `tenant`, never a superadmin: a tenant's erasure request does
 * not reach a person who also belongs elsewhere. Returns the e-mail it removed (the caller erases
 * it from the ledger too).
 */
export async function tombstoneUser(tx: Transaction<Database>, tenant: string, id: string): Promise<UserTombstone> {
  const user = await findUser(tx, id);
  if (!user) return { erased: false, reason: 'no such user' };
  if (user.superadmin === 1) return { erased: false, reason: 'a superadmin is not erased by a tenant request' };
  const orgs = await tx.selectFrom('memberships').select('org_id').where('user_id', '=', id).execute();
  if (!orgs.some((m) => m.org_id === tenant)) return { erased: false, reason: 'not a member of this tenant' };
  if (orgs.length > 1) return { erased: false, reason: 'also a member of another tenant' };
  const at = nowTimestamp();
  await revokeAllCredentials(tx, id, at);
  await tx
    .updateTable('users')
    .set({ email: `erased-${id}@erased.invalid`, password_hash: '!erased', status: 'disabled', updated_at: at })
    .where('id', '=', id)
    .execute();
  return { erased: true, email: user.email };
}

/**
 * `user.created|disabled|enabled` of one user, one event per tenant: the given ones, or every tenant
 * the user is a member of. The data is the user's id, superadmin flag and status: no credential, and
 * no e-mail address (personal data the log would keep past an erasure).
 */
export async function userEvents(
  tx: Transaction<Database>,
  type: 'user.created' | 'user.disabled' | 'user.enabled',
  user: UserView,
  tenants?: readonly string[],
): Promise<EventInput[]> {
  const where =
    tenants ?? (await tx.selectFrom('memberships').select('org_id').where('user_id', '=', user.id).execute()).map((r) => r.org_id);
  // No e-mail: the event log outlives an erasure of the user's personal fields (docs/compliance.md).
  const data = { id: user.id, superadmin: user.superadmin, status: user.status };
  return [...new Set(where)].sort().map((tenant) => ({ type, tenant, subject: `user/${user.id}`, data }));
}
