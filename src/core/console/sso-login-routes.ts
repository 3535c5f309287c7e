/**
 * `POST /v1/m/identity/sso/start` and `/complete`: the SSO login (public; beta, beside the WebAuthn
 * step-up under /v1/m/identity). The browser goes to the provider with the URL `start` answers and
 * comes back to the caller's redirect URI (the CLI's loopback listener); the caller hands code and
 * state to `complete` and gets an ordinary session.
 */
import Type from 'typebox';
import { MultilineText, Text } from '../../contract/common.js';
import { ApiError } from '../../contract/errors.js';
import { PUBLIC, route, type AnyRoute } from '../../contract/route.js';
import { completeLogin, SsoLoginError, startLogin } from './sso-login.js';
import { clientKey } from './sso-pending.js';
import { recordStartRefusal } from './sso-refusals.js';

const common = { stability: 'beta' as const, tags: ['identity'], permission: PUBLIC };
const StartBody = Type.Object({ redirect_uri: Text({ minLength: 10, maxLength: 2000 }) }, { additionalProperties: false });
const StartAnswer = Type.Object(
  { authorization_url: Type.String(), state: Type.String(), expires_at: Type.String() },
  { additionalProperties: false },
);
const CompleteBody = Type.Object(
  {
    state: Text({ minLength: 1, maxLength: 200 }),
    code: Text({ minLength: 1, maxLength: 4000 }),
    iss: Type.Optional(Text({ maxLength: 2000 })),
  },
  { additionalProperties: false },
);
const SessionAnswer = Type.Object(
  {
    token: Type.String(),
    session_id: Type.String(),
    expires_at: Type.String(),
    user_id: Type.String(),
    email: Type.String(),
    provisioned: Type.Boolean(),
    aal: Type.Integer(),
  },
  { additionalProperties: false },
);

export const ssoLoginRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'POST',
    path: '/v1/m/identity/sso/start',
    operationId: 'ssoStart',
    summary: 'Start a single sign-on login: the provider URL (PKCE S256, state, nonce) for the browser',
    body: StartBody,
    response: StartAnswer,
    unaudited:
      'a protocol step (state and PKCE verifier for the provider); the login it leads to is recorded, and refused starts as ' +
      'auth.sso_start_refused, aggregated per client address and minute (sso-refusals.ts)',
    bodyLimit: 4 * 1024,
    timeoutMs: 15_000,
    // Aggregated like every refused start: a flood of malformed starts costs the ledger a record a minute.
    onInputRefused: (ctx, err) => recordStartRefusal(ctx.services, ctx.remoteAddress, clientKey(ctx.remoteAddress), err.code),
    handler: async (ctx) => {
      const client = clientKey(ctx.remoteAddress);
      try {
        return await startLogin(ctx.services, ctx.body.redirect_uri, client);
      } catch (err) {
        const reason = err instanceof SsoLoginError ? err.reason : err instanceof ApiError ? err.code : 'internal';
        await recordStartRefusal(ctx.services, ctx.remoteAddress, client, reason);
        throw err;
      }
    },
  }),
  route({
    ...common,
    method: 'POST',
    path: '/v1/m/identity/sso/complete',
    operationId: 'ssoComplete',
    summary: 'Complete a single sign-on login with the code and state the provider returned; answers a session',
    audit: ['auth.sso_login', 'auth.sso_login_failed'],
    onInputRefused: async (ctx, err) => {
      const meta = { ip: ctx.remoteAddress, reason: err.code, message: err.message.slice(0, 500) };
      await ctx.audit({ kind: 'user', id: '' }, meta, { action: 'auth.sso_login_failed', as: { user: undefined } });
    },
    auditChain: 'system',
    body: CompleteBody,
    response: SessionAnswer,
    bodyLimit: 8 * 1024,
    timeoutMs: 15_000,
    handler: async (ctx) => {
      try {
        const r = await completeLogin(ctx.services, ctx.body);
        await ctx.audit(
          { kind: 'session', id: r.session_id },
          { ip: ctx.remoteAddress, provisioned: r.provisioned, aal: r.aal, amr: ['fed'] },
          { as: { user: r.user_id } },
        );
        return r;
      } catch (err) {
        // Every refusal is recorded, an unexpected failure too (reason `internal`).
        const reason = err instanceof SsoLoginError ? err.reason : err instanceof ApiError ? err.code : 'internal';
        const meta = err instanceof SsoLoginError ? err.meta : {};
        const userId = typeof meta['user_id'] === 'string' ? meta['user_id'] : '';
        await ctx.audit(
          { kind: 'user', id: userId },
          { ip: ctx.remoteAddress, reason, ...meta, ...(err instanceof SsoLoginError && err.email ? { email: err.email } : {}) },
          { action: 'auth.sso_login_failed', as: { user: undefined } },
        );
        throw err;
      }
    },
  }),
];
