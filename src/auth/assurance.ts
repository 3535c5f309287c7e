/**
 * Authenticator assurance levels (NIST SP 800-63B §4; DECISIONS.md "Assurance"): a password
 * session is AAL1; a WebAuthn step-up raises it to AAL3 for 15 minutes. API keys never reach
 * AAL3. The WebAuthn ceremony lives in src/auth/webauthn; it calls `stepUpSession` when an
 * assertion with user verification has been checked.
 */
import { ApiError } from '../contract/errors.js';
import { nowTimestamp } from '../ledger/time.js';
import type { Store } from '../store/store-types.js';
import type { Principal } from './principal.js';

/**
 * Raise a live session to AAL3 until `until` (canonical timestamp); false when the session is not
 * live. Pass `invalidate` (`identityOf(ctx.services).invalidate`) so cached credentials see it now.
 */
export async function stepUpSession(
  store: Store,
  sessionId: string,
  until: string,
  opts: { method?: string; invalidate?: () => void } = {},
): Promise<boolean> {
  const method = opts.method ?? 'hwk';
  const done = await store.transaction(async (tx) => {
    const row = await tx.selectFrom('sessions').select(['amr', 'expires_at', 'revoked_at']).where('id', '=', sessionId).executeTakeFirst();
    if (!row || row.revoked_at !== null || row.expires_at <= nowTimestamp()) return false;
    const amr = new Set(row.amr.split(',').filter(Boolean));
    amr.add(method);
    await tx
      .updateTable('sessions')
      .set({ aal: 3, aal_expires_at: until, amr: [...amr].join(',') })
      .where('id', '=', sessionId)
      .execute();
    return true;
  });
  if (done) opts.invalidate?.();
  return done;
}

/** The principal's current level: 3 only on a session whose step-up has not lapsed. */
export function currentAal(principal: Principal, now: string = nowTimestamp()): number {
  if (principal.kind !== 'user') return 1;
  if (principal.aal >= 3 && principal.aalExpiresAt !== null && principal.aalExpiresAt > now) return 3;
  return principal.aal >= 3 ? 1 : principal.aal;
}

/** Throws 403 `step_up_required` unless the caller is a session at AAL3 (tenant region/status, superadmin enable/disable). */
export function requireAal3(principal: Principal | undefined): void {
  if (!principal || currentAal(principal) < 3) {
    throw new ApiError(
      'step_up_required',
      principal?.kind === 'token' ? 'API keys cannot reach AAL3; use a session stepped up with WebAuthn' : undefined,
    );
  }
}
