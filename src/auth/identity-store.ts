/**
 * Queries of the identity tables shared by the auth layer and the identity routes. Every
 * function takes a transaction from `store.transaction()` (identity tables are global).
 */
import type { Transaction } from 'kysely';
import type { Database } from '../store/schema.js';
import type { UsersTable } from '../store/schema-identity.js';
import { isRole, type Role } from './roles.js';

type Tx = Transaction<Database>;

/** A user row as the routes return it (never the password hash). */
export interface UserView {
  id: string;
  email: string;
  superadmin: boolean;
  status: 'active' | 'disabled';
  created_at: string;
  updated_at: string;
}

/** Strip a user row down to what may leave the server. */
export function userView(row: UsersTable): UserView {
  return {
    id: row.id,
    email: row.email,
    superadmin: row.superadmin === 1,
    status: row.status,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/**
 * Normalised e-mail, the one form users are stored and looked up by: ASCII blanks trimmed and the
 * ASCII letters A–Z folded to a–z, every other code point kept exactly. Never full Unicode case
 * mapping or NFKC: both turn the Kelvin sign (U+212A) into `k`, so a provider account
 * `\u212Aim@…` would match `kim@…` (issue 48). A non-ASCII address matches only itself.
 */
export function normalizeEmail(email: string): string {
  return email.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '').replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32));
}

/** Number of users; zero means setup is still pending. */
export async function countUsers(tx: Tx): Promise<number> {
  const row = await tx.selectFrom('users').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The user with this e-mail. */
export function findUserByEmail(tx: Tx, email: string): Promise<UsersTable | undefined> {
  return tx.selectFrom('users').selectAll().where('email', '=', normalizeEmail(email)).executeTakeFirst();
}

/** The user with this id. */
export function findUser(tx: Tx, id: string): Promise<UsersTable | undefined> {
  return tx.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Live (not deleted) tenants a user is a member of, with the role. */
export async function liveMemberships(tx: Tx, userId: string): Promise<Array<{ tenant: string; role: Role }>> {
  const rows = await tx
    .selectFrom('memberships')
    .innerJoin('tenants', 'tenants.id', 'memberships.org_id')
    .select(['memberships.org_id as tenant', 'memberships.role as role'])
    .where('memberships.user_id', '=', userId)
    .where('tenants.deleted_at', 'is', null)
    .orderBy('memberships.org_id')
    .execute();
  return rows.filter((r): r is { tenant: string; role: Role } => isRole(r.role));
}

/** A live tenant by id. */
export function findLiveTenant(
  tx: Tx,
  id: string,
): Promise<{ id: string; name: string; region: string; status: 'active' | 'suspended'; created_at: string } | undefined> {
  return tx
    .selectFrom('tenants')
    .select(['id', 'name', 'region', 'status', 'created_at'])
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

/** Revoke every live session and API key of a user (disable, password change). */
export async function revokeAllCredentials(tx: Tx, userId: string, at: string): Promise<{ sessions: number; tokens: number }> {
  const s = await tx
    .updateTable('sessions')
    .set({ revoked_at: at })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  const t = await tx
    .updateTable('api_tokens')
    .set({ revoked_at: at })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return { sessions: Number(s.numUpdatedRows), tokens: Number(t.numUpdatedRows) };
}
