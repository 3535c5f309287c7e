/**
 * Password login with lockout (DECISIONS.md): 5 failures per 15 minutes per account and per
 * client IP → 429 `locked_out` with `Retry-After`, and the right password is refused meanwhile.
 * Unknown e-mail, wrong password and disabled account cost the same scrypt work and get the same
 * generic answer, so neither timing nor text tells which accounts exist.
 */
import { ApiError } from '../../contract/errors.js';
import type { RequestContext } from '../../http/context.js';
import { identityOf } from '../../auth/runtime.js';
import { findUserByEmail, normalizeEmail } from '../../auth/identity-store.js';
import { dummyPasswordHash, verifyPassword } from '../../auth/passwords.js';
import { createSession, type IssuedSession } from '../../auth/sessions.js';
import { passwordLoginDisabled } from '../console/sso-login.js';

/** The records a password login may append (both login routes declare them): success first. */
export const LOGIN_AUDIT = ['auth.login', 'auth.login_failed'] as const;

/** Handle `POST /v1/auth/login`. */
export async function login(ctx: RequestContext<unknown, unknown, { email: string; password: string }>): Promise<IssuedSession> {
  const runtime = identityOf(ctx.services);
  const email = normalizeEmail(ctx.body.email);
  const keys = [`account:${email}`, `ip:${ctx.remoteAddress}`];
  const meta = { email, ip: ctx.remoteAddress, request_id: ctx.requestId };
  const wait = await runtime.lockout.retryAfter(keys);
  if (wait > 0) {
    await ctx.audit({ kind: 'user', id: '' }, { ...meta, reason: 'locked_out' }, { action: 'auth.login_failed', as: { user: undefined } });
    throw new ApiError('locked_out', undefined, { 'retry-after': String(wait) });
  }
  const user = await runtime.store.transaction((tx) => findUserByEmail(tx, email));
  const stored = user?.password_hash ?? (await dummyPasswordHash(runtime.passwordParams));
  const passwordOk = await verifyPassword(ctx.body.password, stored);
  // An account that signs in through the OpenID provider only (docs/sso.md) gets the generic refusal too.
  const ssoOnly = user !== undefined && passwordOk && (await passwordLoginDisabled(ctx.services, user.id));
  if (!user || !passwordOk || user.status !== 'active' || ssoOnly) {
    await runtime.lockout.fail(keys);
    const reason = !user ? 'unknown_user' : !passwordOk ? 'wrong_password' : ssoOnly ? 'sso_only' : 'disabled';
    await ctx.audit({ kind: 'user', id: user?.id ?? '' }, { ...meta, reason }, { action: 'auth.login_failed', as: { user: user?.id } });
    throw new ApiError('unauthenticated', 'invalid e-mail or password');
  }
  await runtime.lockout.clear(keys[0] as string);
  const session = await runtime.store.transaction((tx) => createSession(tx, user.id));
  await ctx.audit({ kind: 'session', id: session.session_id }, { ip: ctx.remoteAddress, amr: ['pwd'] }, { as: { user: user.id } });
  return session;
}
