/** Queries of the WebAuthn tables (migration 4); callers pass the transaction. */
import type { Selectable, Transaction } from 'kysely';
import type { Database } from '../../store/schema.js';
import type { WebauthnCredentialsTable } from '../../store/schema-webauthn.js';

type Tx = Transaction<Database>;

/** A stored credential as the ceremonies use it. */
export interface StoredCredential {
  id: string;
  userId: string;
  credentialId: string;
  publicKey: Uint8Array;
  signCount: number;
  transports: string[];
  name: string;
  deviceType: string;
  backedUp: boolean;
  createdAt: string;
  lastUsedAt: string | null;
}

/** The credential as the API shows it (never the public key bytes). */
export interface CredentialView {
  id: string;
  name: string;
  transports: string[];
  device_type: string;
  backed_up: boolean;
  created_at: string;
  last_used_at: string | null;
}

function fromRow(row: Selectable<WebauthnCredentialsTable>): StoredCredential {
  return {
    id: row.id,
    userId: row.user_id,
    credentialId: row.credential_id,
    publicKey: new Uint8Array(Buffer.from(row.public_key, 'base64url')),
    signCount: Number(row.sign_count),
    transports: row.transports ? row.transports.split(',') : [],
    name: row.name,
    deviceType: row.device_type,
    backedUp: row.backed_up === 1,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  };
}

/** The public view of a credential. */
export function credentialView(c: StoredCredential): CredentialView {
  return {
    id: c.id,
    name: c.name,
    transports: c.transports,
    device_type: c.deviceType,
    backed_up: c.backedUp,
    created_at: c.createdAt,
    last_used_at: c.lastUsedAt,
  };
}

/** Every credential of a user, oldest first. */
export async function listCredentials(tx: Tx, userId: string): Promise<StoredCredential[]> {
  const rows = await tx
    .selectFrom('webauthn_credentials')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(fromRow);
}

/** One credential of a user by its WebAuthn credential id (base64url), or undefined. */
export async function findCredential(tx: Tx, userId: string, credentialId: string): Promise<StoredCredential | undefined> {
  const row = await tx
    .selectFrom('webauthn_credentials')
    .selectAll()
    .where('user_id', '=', userId)
    .where('credential_id', '=', credentialId)
    .executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/** True when any user already holds this credential id (unique across the server). */
export async function credentialIdTaken(tx: Tx, credentialId: string): Promise<boolean> {
  const row = await tx.selectFrom('webauthn_credentials').select('id').where('credential_id', '=', credentialId).executeTakeFirst();
  return row !== undefined;
}

/** Store a newly registered credential. */
export async function insertCredential(tx: Tx, c: StoredCredential): Promise<void> {
  await tx
    .insertInto('webauthn_credentials')
    .values({
      id: c.id,
      user_id: c.userId,
      credential_id: c.credentialId,
      public_key: Buffer.from(c.publicKey).toString('base64url'),
      sign_count: c.signCount,
      transports: c.transports.join(','),
      name: c.name,
      device_type: c.deviceType,
      backed_up: c.backedUp ? 1 : 0,
      created_at: c.createdAt,
      last_used_at: c.lastUsedAt,
    })
    .execute();
}

/** Record a successful assertion: the new signature counter (§6.1.1) and when it was used. */
export async function recordUse(tx: Tx, id: string, signCount: number, at: string): Promise<void> {
  await tx.updateTable('webauthn_credentials').set({ sign_count: signCount, last_used_at: at }).where('id', '=', id).execute();
}

/** Delete one credential of a user; false when it is not theirs or does not exist. */
export async function deleteCredential(tx: Tx, userId: string, id: string): Promise<boolean> {
  const res = await tx.deleteFrom('webauthn_credentials').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** An outstanding challenge. */
export interface PendingChallenge {
  id: string;
  userId: string;
  sessionId: string;
  purpose: 'register' | 'step_up';
  challenge: string;
  expiresAt: string;
}

/** Remember a challenge; expired ones are swept at the same time so the table stays small. */
export async function saveChallenge(tx: Tx, c: PendingChallenge, now: string): Promise<void> {
  await tx.deleteFrom('webauthn_challenges').where('expires_at', '<=', now).execute();
  await tx
    .insertInto('webauthn_challenges')
    .values({
      id: c.id,
      user_id: c.userId,
      session_id: c.sessionId,
      purpose: c.purpose,
      challenge: c.challenge,
      created_at: now,
      expires_at: c.expiresAt,
    })
    .execute();
}

/**
 * Take a challenge exactly once (§13.4.3: a challenge must not be replayable): it is deleted in
 * the same transaction, and only the deleter gets it back. Undefined when it is unknown, belongs
 * to another session or purpose, or has expired.
 */
export async function consumeChallenge(
  tx: Tx,
  id: string,
  sessionId: string,
  purpose: PendingChallenge['purpose'],
  now: string,
): Promise<PendingChallenge | undefined> {
  const row = await tx.selectFrom('webauthn_challenges').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) return undefined;
  const res = await tx.deleteFrom('webauthn_challenges').where('id', '=', id).executeTakeFirst();
  if (Number(res.numDeletedRows) !== 1) return undefined;
  if (row.session_id !== sessionId || row.purpose !== purpose || row.expires_at <= now) return undefined;
  return {
    id: row.id,
    userId: row.user_id,
    sessionId: row.session_id,
    purpose: row.purpose,
    challenge: row.challenge,
    expiresAt: row.expires_at,
  };
}
