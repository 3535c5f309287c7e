/**
 * The web console's sign-in (beta, namespace `identity`; docs/web.md): the same password login as
 * `POST /v1/auth/login`, but the session token goes into an HttpOnly cookie instead of the answer,
 * and the answer carries the CSRF token the console sends on every mutation
 * (src/auth/browser-session.ts). Bearer clients keep using `/v1/auth/*` unchanged.
 */
import Type from 'typebox';
import { Timestamp, Uuid } from '../../contract/common.js';
import { errors } from '../../contract/errors.js';
import { PUBLIC, route, type AnyRoute } from '../../contract/route.js';
import { reply } from '../../http/reply.js';
import { nowTimestamp } from '../../ledger/time.js';
import { identityOf } from '../../auth/runtime.js';
import { revokeSession } from '../../auth/sessions.js';
import { CLEARED_COOKIE, SESSION_COOKIE, csrfTokenFor, parseCookies, sessionCookie } from '../../auth/browser-session.js';
import { Email, Password } from '../users/schemas.js';
import { LOGIN_AUDIT, login } from './login.js';

const PATH = '/v1/m/identity/browser-session';
const LoginBody = Type.Object({ email: Email, password: Password }, { additionalProperties: false });
const BrowserSession = Type.Object(
  {
    session_id: Uuid,
    expires_at: Timestamp,
    csrf_token: Type.String({ description: 'send as X-CSRF-Token on every POST, PUT, PATCH and DELETE' }),
  },
  { additionalProperties: false },
);
const common = { stability: 'beta' as const, tags: ['identity'] };

export const browserSessionRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'POST',
    path: PATH,
    operationId: 'browserLogin',
    summary: 'Sign a browser in: the session token is set as an HttpOnly, Secure, SameSite=Strict cookie, the CSRF token answered',
    permission: PUBLIC,
    audit: LOGIN_AUDIT,
    auditChain: 'system',
    body: LoginBody,
    response: BrowserSession,
    bodyLimit: 8 * 1024,
    handler: async (ctx) => {
      const issued = await login(ctx);
      const maxAge = (Date.parse(issued.expires_at) - Date.now()) / 1000;
      return reply.json({ session_id: issued.session_id, expires_at: issued.expires_at, csrf_token: csrfTokenFor(issued.token) }, 200, {
        'set-cookie': sessionCookie(issued.token, maxAge),
      });
    },
  }),
  route({
    ...common,
    method: 'GET',
    path: PATH,
    operationId: 'browserSession',
    summary: "The cookie session's id, expiry and CSRF token (a reloaded console page reads it here)",
    permission: 'self:read',
    response: BrowserSession,
    handler: (ctx) => {
      const p = ctx.principal;
      const token = parseCookies(ctx.headers['cookie']).get(SESSION_COOKIE);
      if (!p || p.kind !== 'user' || ctx.headers['authorization'] !== undefined || !token)
        throw errors.badRequest('this route answers for a browser session cookie only');
      return { session_id: p.credentialId, expires_at: p.expiresAt ?? '', csrf_token: csrfTokenFor(token) };
    },
  }),
  route({
    ...common,
    method: 'DELETE',
    path: PATH,
    operationId: 'browserLogout',
    summary: 'Sign the browser out: revoke the cookie session and clear the cookie',
    permission: 'self:write',
    audit: 'auth.logout',
    auditChain: 'system',
    status: 204,
    handler: async (ctx) => {
      const p = ctx.principal;
      if (!p || p.kind !== 'user') throw errors.badRequest('this operation applies to sessions');
      const runtime = identityOf(ctx.services);
      await runtime.store.transaction((tx) => revokeSession(tx, p.credentialId, nowTimestamp()));
      runtime.invalidate();
      await ctx.audit({ kind: 'session', id: p.credentialId });
      return reply.empty(204, { 'set-cookie': CLEARED_COOKIE });
    },
  }),
];
