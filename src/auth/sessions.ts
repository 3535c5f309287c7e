/** Session rows: created by login, rotated by refresh, revoked by logout (DECISIONS.md: 12 h, AAL1). */
import type { Transaction } from 'kysely';
import { formatTimestamp, nowEpochNs } from '../ledger/time.js';
import { uuid7 } from '../ledger/uuid7.js';
import type { Database } from '../store/schema.js';
import { mintToken } from './opaque-token.js';
import { SESSION_TTL_MS } from './runtime.js';

/** What login and refresh answer. */
export interface IssuedSession {
  token: string;
  session_id: string;
  expires_at: string;
}

/** Insert a new session for `userId`, returning its token (shown once). */
export async function createSession(
  tx: Transaction<Database>,
  userId: string,
  carry: { aal?: number; aalExpiresAt?: string | null; amr?: string } = {},
): Promise<IssuedSession> {
  const minted = mintToken('session');
  const nowNs = nowEpochNs();
  const createdAt = formatTimestamp(nowNs);
  const expiresAt = formatTimestamp(nowNs + BigInt(SESSION_TTL_MS) * 1_000_000n);
  const id = uuid7();
  await tx
    .insertInto('sessions')
    .values({
      id,
      selector: minted.selector,
      secret_hash: minted.secretHash,
      user_id: userId,
      aal: carry.aal ?? 1,
      aal_expires_at: carry.aalExpiresAt ?? null,
      amr: carry.amr ?? 'pwd',
      created_at: createdAt,
      expires_at: expiresAt,
      revoked_at: null,
    })
    .execute();
  return { token: minted.token, session_id: id, expires_at: expiresAt };
}

/** Revoke one live session; false when it was already revoked (a concurrent logout or refresh won). */
export async function revokeSession(tx: Transaction<Database>, sessionId: string, at: string): Promise<boolean> {
  const r = await tx
    .updateTable('sessions')
    .set({ revoked_at: at })
    .where('id', '=', sessionId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
