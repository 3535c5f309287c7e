/**
 * Single sign-on with the configured OpenID provider (docs/sso.md): the authorization-code flow with
 * PKCE (S256), state and nonce, through `openid-client` (pinned). The ID token's signature is checked
 * against the provider's JWKS (fetched again at each login, so a rotated key is picked up and a key
 * id the JWKS does not hold fails), with its issuer, audience, expiry and nonce, then its azp and iat.
 * The person is then found by (issuer, subject), or an existing account with the same e-mail (ASCII
 * letters folded, nothing else) is linked when the settings allow it and the provider verified the
 * address, or one is provisioned just in time by the role mapping; the answer is an ordinary session.
 * Pending logins live in the store (sso-pending.ts).
 */
import * as oidc from 'openid-client';
import { randomBytes } from 'node:crypto';
import { ApiError, type ErrorCode } from '../../contract/errors.js';
import { nowTimestamp, formatTimestamp, nowEpochNs } from '../../ledger/time.js';
import { uuid7 } from '../../ledger/uuid7.js';
import { createSession, type IssuedSession } from '../../auth/sessions.js';
import { findUserByEmail, normalizeEmail } from '../../auth/identity-store.js';
import { isUniqueViolation } from '../../store/store-error.js';
import { AAL3_TTL_MS } from '../../auth/runtime.js';
import type { Services } from '../../serve/services.js';
import { readSetting } from './console-state.js';
import { resolveSecret, SecretUnavailableError } from './secrets-service.js';
import { ssoFetch } from './sso-fetch.js';
import { ssoSettingsOf, type SsoSettings } from './sso-settings.js';
import { allowedRedirectUri } from './sso-redirect.js';
import { admitPending, PENDING_TTL_MS, takePending } from './sso-pending.js';

async function settingsOf(s: Services): Promise<SsoSettings> {
  const row = await readSetting<SsoSettings>(s, 'sso');
  if (!row) throw new ApiError('not_configured', 'single sign-on is not configured (PUT /v1/console/sso)');
  return ssoSettingsOf(row.value);
}

/** Discovery and client configuration; a loopback http issuer is allowed (tests, local providers), nothing else in clear. */
async function configure(s: Services, cfg: SsoSettings): Promise<oidc.Configuration> {
  let secret: string | undefined;
  if (cfg.client_secret_ref) {
    try {
      secret = await resolveSecret(s.store, s.sealer, cfg.client_secret_ref);
    } catch (err) {
      // Fail closed: never fall back to a public client when the configured secret is gone.
      if (err instanceof SecretUnavailableError) throw new ApiError('unavailable', `single sign-on is unavailable: ${err.message}`);
      throw err;
    }
  }
  const issuer = new URL(cfg.issuer);
  const loopbackHttp = issuer.protocol === 'http:' && ['127.0.0.1', '[::1]', 'localhost'].includes(issuer.hostname);
  try {
    const config = await oidc.discovery(
      issuer,
      cfg.client_id,
      undefined,
      secret === undefined ? oidc.None() : oidc.ClientSecretPost(secret),
      {
        execute: [...(loopbackHttp ? [oidc.allowInsecureRequests] : []), oidc.enableNonRepudiationChecks],
        timeout: 5,
        // the egress guard and explicit certificate verification (sso-fetch.ts), kept by the configuration
        [oidc.customFetch]: ssoFetch,
      },
    );
    return config;
  } catch (err) {
    // openid-client says "something went wrong" and keeps the reason (an egress refusal, a TLS error) as the cause
    const cause = (err as { cause?: unknown }).cause;
    const why = cause instanceof Error ? `${(err as Error).message} (${cause.message})` : (err as Error).message;
    throw new ApiError('unavailable', `the OpenID provider ${cfg.issuer} is unreachable or its discovery document is unusable: ${why}`);
  }
}

export interface StartAnswer {
  authorization_url: string;
  state: string;
  expires_at: string;
}

export async function startLogin(s: Services, redirectUri: string, client: string): Promise<StartAnswer> {
  const cfg = await settingsOf(s);
  const redirect = allowedRedirectUri(redirectUri, cfg);
  if (redirect === undefined)
    throw new SsoLoginError(
      'bad_redirect_uri',
      'redirect_uri must be the loopback callback http://127.0.0.1:<port>/callback (or [::1]) or one of the configured redirect_uris',
      undefined,
      { code: 'bad_request' },
    );
  const config = await configure(s, cfg);
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirect,
    scope: cfg.scopes.join(' '),
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  await admitPending(s.store, state, client, { nonce, verifier, redirectUri: redirect, issuer: cfg.issuer });
  return { authorization_url: url.toString(), state, expires_at: new Date(Date.now() + PENDING_TTL_MS).toISOString() };
}

export interface SsoLoginResult extends IssuedSession {
  user_id: string;
  email: string;
  provisioned: boolean;
  aal: number;
}

/**
 * A refused login: the reason (and `meta`, e.g. both subjects of an identity conflict) goes to the
 * ledger; the caller gets `code` (401 `unauthenticated` unless said otherwise) and the message.
 */
export class SsoLoginError extends ApiError {
  readonly meta: Record<string, unknown>;
  constructor(
    readonly reason: string,
    message: string,
    readonly email?: string,
    opts: { code?: ErrorCode; meta?: Record<string, unknown> } = {},
  ) {
    super(opts.code ?? 'unauthenticated', message);
    this.meta = opts.meta ?? {};
  }
}

/** Clock tolerance of the time claims, as openid-client's own expiry check (docs/sso.md). */
const CLOCK_TOLERANCE_S = 30;

/**
 * Checks of the ID token openid-client leaves to the caller (OIDC Core §3.1.3.7): an `azp` must name
 * this client, and several audiences need one; `iat` and `nbf` may not lie in the future.
 */
function checkIdTokenClaims(claims: Record<string, unknown>, clientId: string): void {
  const aud = Array.isArray(claims['aud']) ? claims['aud'] : [claims['aud']];
  const azp = claims['azp'];
  if (azp !== undefined && azp !== clientId) throw new Error(`the ID token's azp names another client (${String(azp).slice(0, 100)})`);
  if (aud.length > 1 && azp === undefined) throw new Error('the ID token names several audiences and no azp');
  const now = Math.floor(Date.now() / 1000);
  const iat = claims['iat'];
  if (typeof iat !== 'number' || !Number.isFinite(iat)) throw new Error('the ID token has no numeric iat');
  if (iat > now + CLOCK_TOLERANCE_S) throw new Error('the ID token was issued in the future (iat)');
  const nbf = claims['nbf'];
  if (nbf !== undefined && (typeof nbf !== 'number' || nbf > now + CLOCK_TOLERANCE_S))
    throw new Error('the ID token is not valid yet (nbf)');
}

/** An e-mail claim fit to name an account: one @, no blanks or control characters, at most 254 characters. */
const EMAIL_SHAPE = /^[^\s@\u0000-\u001f\u007f]+@[^\s@\u0000-\u001f\u007f]+$/;

/** 409 `sso_identity_conflict`: the account is linked to another subject; an administrator relinks it. */
function conflict(email: string, meta: Record<string, unknown>): SsoLoginError {
  return new SsoLoginError(
    'sso_identity_conflict',
    'SSO login refused: this account is linked to another identity at the provider; an administrator can relink it ' +
      '(PUT /v1/m/identity/sso/identities/{user_id})',
    email,
    { code: 'sso_identity_conflict', meta },
  );
}

function claimMatches(claims: Record<string, unknown>, claim: string, value: string): boolean {
  const v = claims[claim];
  return Array.isArray(v) ? v.map(String).includes(value) : v !== undefined && String(v) === value;
}

export async function completeLogin(s: Services, input: { state: string; code: string; iss?: string }): Promise<SsoLoginResult> {
  // Consumed before anything else: a state (and the code bound to its verifier) completes once.
  const p = await takePending(s.store, input.state);
  if (!p) throw new SsoLoginError('bad_state', 'SSO login failed: unknown or expired state (start again)');
  const cfg = await settingsOf(s);
  if (cfg.issuer !== p.issuer) throw new SsoLoginError('issuer_changed', 'SSO login failed: the provider changed since this login started');
  const config = await configure(s, cfg);
  const callback = new URL(p.redirectUri);
  callback.searchParams.set('code', input.code);
  callback.searchParams.set('state', input.state);
  if (input.iss !== undefined) callback.searchParams.set('iss', input.iss);
  let claims: Record<string, unknown>;
  try {
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: p.verifier,
      expectedState: input.state,
      expectedNonce: p.nonce,
      idTokenExpected: true,
    });
    claims = (tokens.claims() ?? {}) as Record<string, unknown>;
    checkIdTokenClaims(claims, cfg.client_id);
    // Many providers keep scope claims (email, groups) in userinfo; fetched with the access token and
    // bound to the ID token's subject. The ID token's own claims win.
    const wanted = ['email', 'email_verified', ...cfg.role_mapping.map((r) => r.claim)];
    if (wanted.some((c) => claims[c] === undefined) && config.serverMetadata().userinfo_endpoint && tokens.access_token) {
      const info = (await oidc.fetchUserInfo(config, tokens.access_token, String(claims['sub']))) as Record<string, unknown>;
      claims = { ...info, ...claims };
    }
  } catch (err) {
    throw new SsoLoginError('token_rejected', `SSO login failed: ${(err as Error).message}`);
  }
  const sub = String(claims['sub'] ?? '');
  const email = typeof claims['email'] === 'string' ? normalizeEmail(claims['email']) : '';
  if (!sub) throw new SsoLoginError('no_subject', 'SSO login failed: the ID token has no subject');
  if (!email) throw new SsoLoginError('no_email', 'SSO login failed: the ID token carries no e-mail (add the email scope)');
  if (email.length > 254 || !EMAIL_SHAPE.test(email))
    throw new SsoLoginError('bad_email', 'SSO login failed: the e-mail claim is not an e-mail address');
  const domain = email.slice(email.lastIndexOf('@') + 1);
  if (cfg.allowed_domains.length > 0 && !cfg.allowed_domains.includes(domain))
    throw new SsoLoginError('domain_not_allowed', `SSO login refused: e-mail domain ${domain} is not allowed`, email);
  const acr = typeof claims['acr'] === 'string' ? claims['acr'] : undefined;
  const amr = Array.isArray(claims['amr']) ? claims['amr'].map(String) : [];
  const aal3 = acr !== undefined && cfg.aal3_acr_values.includes(acr);
  const rules = cfg.role_mapping.filter((r) => claimMatches(claims, r.claim, r.value));
  const outcome = await s.store.transaction(async (tx) => {
    const now = nowTimestamp();
    const linked = await tx
      .selectFrom('sso_identities')
      .select('user_id')
      .where('issuer', '=', cfg.issuer)
      .where('subject', '=', sub)
      .executeTakeFirst();
    let userId = linked?.user_id;
    let provisioned = false;
    if (!userId) {
      // Equal e-mails only: exact code points, ASCII letters folded (identity-store.ts normalizeEmail).
      const existing = await findUserByEmail(tx, email);
      if (existing) {
        // Linking an existing account: only when the administrator allows it and the provider vouches for the address.
        if (!cfg.link_existing_accounts)
          throw new SsoLoginError(
            'link_not_allowed',
            'SSO login refused: an account with this e-mail exists and linking existing accounts is off (link_existing_accounts)',
            email,
            { meta: { user_id: existing.id, subject: sub } },
          );
        if (claims['email_verified'] !== true)
          throw new SsoLoginError(
            'email_unverified',
            'SSO login refused: an account with this e-mail exists and the provider did not verify the address',
            email,
          );
        const held = await tx
          .selectFrom('sso_identities')
          .select(['issuer', 'subject'])
          .where('user_id', '=', existing.id)
          .executeTakeFirst();
        if (held) {
          const linked = { linked_issuer: held.issuer, linked_subject: held.subject };
          throw conflict(email, { user_id: existing.id, issuer: cfg.issuer, subject: sub, ...linked });
        }
        userId = existing.id;
      } else {
        if (rules.length === 0)
          throw new SsoLoginError('no_mapping', 'SSO login refused: no role mapping rule matches this identity', email);
        userId = uuid7();
        // No password at all: not a scrypt hash, so password login never verifies for this account.
        await tx
          .insertInto('users')
          .values({
            id: userId,
            email,
            password_hash: `sso$${randomBytes(16).toString('hex')}`,
            superadmin: 0,
            status: 'active',
            created_at: now,
            updated_at: now,
          })
          .execute();
        provisioned = true;
      }
      await tx
        .insertInto('sso_identities')
        .values({
          user_id: userId,
          issuer: cfg.issuer,
          subject: sub,
          password_disabled: provisioned || cfg.disable_password_login ? 1 : 0,
          created_at: now,
          last_login_at: now,
        })
        .execute();
    } else await tx.updateTable('sso_identities').set({ last_login_at: now }).where('user_id', '=', userId).execute();
    const user = await tx.selectFrom('users').select(['status']).where('id', '=', userId).executeTakeFirstOrThrow();
    if (user.status !== 'active') throw new SsoLoginError('disabled', 'SSO login refused: the account is disabled', email);
    // The mapping grants memberships; it never lowers a role granted otherwise.
    const order = ['viewer', 'editor', 'admin', 'owner'];
    for (const r of rules) {
      const tenant = await tx
        .selectFrom('tenants')
        .select('id')
        .where('id', '=', r.tenant)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      if (!tenant) continue;
      const m = await tx
        .selectFrom('memberships')
        .select('role')
        .where('user_id', '=', userId)
        .where('org_id', '=', r.tenant)
        .executeTakeFirst();
      if (!m)
        await tx
          .insertInto('memberships')
          .values({ user_id: userId, org_id: r.tenant, role: r.role, created_at: now, updated_at: now })
          .execute();
      else if (order.indexOf(r.role) > order.indexOf(m.role))
        await tx
          .updateTable('memberships')
          .set({ role: r.role, updated_at: now })
          .where('user_id', '=', userId)
          .where('org_id', '=', r.tenant)
          .execute();
    }
    const session = await createSession(tx, userId, {
      aal: aal3 ? 3 : 1,
      aalExpiresAt: aal3 ? formatTimestamp(nowEpochNs() + BigInt(AAL3_TTL_MS) * 1_000_000n) : null,
      amr: ['fed', ...amr.filter((m) => /^[a-z]{2,8}$/.test(m))].join(','),
    });
    return { session, userId, provisioned };
  }).catch((err: unknown) => {
    // Two first logins racing to link the same account or subject: the loser is a conflict, not a 500.
    if (isUniqueViolation(err)) throw conflict(email, { issuer: cfg.issuer, subject: sub });
    throw err;
  });
  s.identity?.invalidate();
  return { ...outcome.session, user_id: outcome.userId, email, provisioned: outcome.provisioned, aal: aal3 ? 3 : 1 };
}

/** True when password login is refused for this user (provisioned by SSO, or linked with password login disabled). */
export async function passwordLoginDisabled(s: Services, userId: string): Promise<boolean> {
  const row = await s.store.transaction((tx) =>
    tx.selectFrom('sso_identities').select('password_disabled').where('user_id', '=', userId).executeTakeFirst(),
  );
  return row !== undefined && Number(row.password_disabled) === 1;
}
