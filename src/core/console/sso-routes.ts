/** `GET|PUT|DELETE /v1/console/sso` and `POST /v1/console/sso/test`: the OpenID provider; superadmin. */
import Type from 'typebox';
import { MultilineText, Text } from '../../contract/common.js';
import { request } from 'undici';
import { errors } from '../../contract/errors.js';
import { route, type AnyRoute } from '../../contract/route.js';
import { reply } from '../../http/reply.js';
import { nowTimestamp } from '../../ledger/time.js';
import type { Principal } from '../../auth/principal.js';
import type { Services } from '../../serve/services.js';
import { readSetting } from './console-state.js';
import { resolveSecret, secretExists, SecretUnavailableError, SECRET_NAME_PATTERN } from './secrets-service.js';
import { ssoDispatcher } from './sso-fetch.js';
import { ssoSettingsOf, type SsoSettings } from './sso-settings.js';
import { checkConfiguredRedirectUri } from './sso-redirect.js';

const common = { stability: 'stable' as const, tags: ['console'], permission: 'system:admin' };
const Role = Type.Union([Type.Literal('viewer'), Type.Literal('editor'), Type.Literal('admin'), Type.Literal('owner')]);
const RoleRule = Type.Object(
  {
    claim: Text({ minLength: 1, maxLength: 100 }),
    value: Text({ minLength: 1, maxLength: 200 }),
    tenant: Type.String({ format: 'uuid', pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' }),
    role: Role,
  },
  { additionalProperties: false },
);
const SsoFields = {
  issuer: Type.String({ minLength: 8, maxLength: 2000, pattern: '^https?://' }),
  client_id: Text({ minLength: 1, maxLength: 255 }),
  client_secret_ref: Type.Union([Type.String({ pattern: `^secret:${SECRET_NAME_PATTERN.slice(1)}` }), Type.Null()], {
    description: 'secret:<name> in the sealed secrets store; null for a public client',
  }),
  scopes: Type.Array(Type.String({ pattern: '^[\\x21\\x23-\\x5b\\x5d-\\x7e]{1,100}$' }), { maxItems: 20 }),
  role_mapping: Type.Array(RoleRule, { maxItems: 100 }),
  allowed_domains: Type.Array(Type.String({ pattern: '^[a-z0-9.-]{1,253}$' }), { maxItems: 100 }),
  disable_password_login: Type.Boolean(),
  aal3_acr_values: Type.Array(Text({ minLength: 1, maxLength: 200 }), { maxItems: 20 }),
  link_existing_accounts: Type.Boolean({
    description: 'a first SSO login may link an existing account with the same verified e-mail (docs/sso.md); default false',
  }),
  redirect_uris: Type.Array(Type.String({ minLength: 10, maxLength: 2000, pattern: '^https://[^#]+$' }), {
    maxItems: 20,
    description: 'https redirect URIs registered at the provider, matched exactly, besides the loopback callback',
  }),
};
const SsoBody = Type.Object(
  {
    issuer: SsoFields.issuer,
    client_id: SsoFields.client_id,
    client_secret_ref: Type.Optional(SsoFields.client_secret_ref),
    scopes: Type.Optional(SsoFields.scopes),
    role_mapping: Type.Optional(SsoFields.role_mapping),
    allowed_domains: Type.Optional(SsoFields.allowed_domains),
    disable_password_login: Type.Optional(SsoFields.disable_password_login),
    aal3_acr_values: Type.Optional(SsoFields.aal3_acr_values),
    link_existing_accounts: Type.Optional(SsoFields.link_existing_accounts),
    redirect_uris: Type.Optional(SsoFields.redirect_uris),
  },
  { additionalProperties: false },
);
const SsoView = Type.Object(
  {
    configured: Type.Boolean(),
    settings: Type.Union([Type.Object(SsoFields, { additionalProperties: false }), Type.Null()]),
    updated_at: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);
const TestStep = Type.Object({ step: Type.String(), ok: Type.Boolean(), detail: Type.String() }, { additionalProperties: false });
const TestAnswer = Type.Object({ ok: Type.Boolean(), steps: Type.Array(TestStep) }, { additionalProperties: false });

function principalOf(ctx: { principal?: Principal }): Principal {
  if (!ctx.principal) throw errors.unauthenticated();
  return ctx.principal;
}

/** A JSON document over HTTP(S) with a deadline; errors carry what failed, never a body. */
async function fetchJson(url: string, timeoutMs = 5_000): Promise<unknown> {
  const res = await request(url, {
    dispatcher: ssoDispatcher(),
    method: 'GET',
    headers: { accept: 'application/json' },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${url} answered HTTP ${res.statusCode}`);
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${url} did not answer JSON`);
  }
}

/** Discovery, issuer match, JWKS and the client secret reference, each step reported. */
export async function testProvider(
  s: Services,
  cfg: SsoSettings,
): Promise<{ ok: boolean; steps: Array<{ step: string; ok: boolean; detail: string }> }> {
  const steps: Array<{ step: string; ok: boolean; detail: string }> = [];
  const discoveryUrl = `${cfg.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
  let meta: Record<string, unknown> | undefined;
  try {
    meta = (await fetchJson(discoveryUrl)) as Record<string, unknown>;
    steps.push({ step: 'discovery', ok: true, detail: `fetched ${discoveryUrl}` });
  } catch (err) {
    steps.push({ step: 'discovery', ok: false, detail: (err as Error).message });
  }
  if (meta) {
    const issuerOk = meta['issuer'] === cfg.issuer;
    steps.push({
      step: 'issuer',
      ok: issuerOk,
      detail: issuerOk
        ? 'the document names the configured issuer'
        : `the document names ${JSON.stringify(meta['issuer'])}, not ${cfg.issuer}`,
    });
    const methods = meta['code_challenge_methods_supported'];
    const pkce = Array.isArray(methods) && methods.includes('S256');
    steps.push({
      step: 'pkce',
      ok: pkce,
      detail: pkce ? 'S256 code challenges supported' : 'the provider does not list S256 in code_challenge_methods_supported',
    });
    const endpoints = ['authorization_endpoint', 'token_endpoint', 'jwks_uri'].filter((k) => typeof meta?.[k] !== 'string');
    steps.push({
      step: 'endpoints',
      ok: endpoints.length === 0,
      detail: endpoints.length === 0 ? 'authorization, token and JWKS endpoints present' : `missing ${endpoints.join(', ')}`,
    });
    if (typeof meta['jwks_uri'] === 'string') {
      try {
        const jwks = (await fetchJson(meta['jwks_uri'])) as { keys?: Array<{ kid?: string; use?: string }> };
        const sig = (jwks.keys ?? []).filter((k) => k.use === undefined || k.use === 'sig');
        steps.push({
          step: 'jwks',
          ok: sig.length > 0,
          detail:
            sig.length > 0
              ? `${sig.length} signing key(s): ${sig.map((k) => k.kid ?? '(no kid)').join(', ')}`
              : 'the JWKS holds no signing key',
        });
      } catch (err) {
        steps.push({ step: 'jwks', ok: false, detail: (err as Error).message });
      }
    }
  }
  if (cfg.client_secret_ref) {
    try {
      await resolveSecret(s.store, s.sealer, cfg.client_secret_ref);
      steps.push({ step: 'client_secret', ok: true, detail: `${cfg.client_secret_ref} resolves` });
    } catch (err) {
      steps.push({
        step: 'client_secret',
        ok: false,
        detail: err instanceof SecretUnavailableError ? err.message : 'the client secret could not be read',
      });
    }
  }
  return { ok: steps.every((x) => x.ok), steps };
}

export const ssoConfigRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'GET',
    path: '/v1/console/sso',
    operationId: 'getSso',
    summary: 'The OpenID provider used for single sign-on (the client secret only as a reference)',
    response: SsoView,
    handler: async (ctx) => {
      const row = await readSetting<SsoSettings>(ctx.services, 'sso');
      return row
        ? { configured: true, settings: ssoSettingsOf(row.value), updated_at: row.updated_at }
        : { configured: false, settings: null, updated_at: null };
    },
  }),
  route({
    ...common,
    method: 'PUT',
    path: '/v1/console/sso',
    operationId: 'putSso',
    summary:
      'Set the OpenID provider: issuer, client id, client secret reference, scopes, claim → role and tenant mapping, allowed e-mail ' +
      'domains',
    audit: 'sso.configure',
    auditChain: 'system',
    body: SsoBody,
    response: SsoView,
    bodyLimit: 64 * 1024,
    handler: async (ctx) => {
      const p = principalOf(ctx);
      const b = ctx.body;
      const ref = b.client_secret_ref ?? null;
      // A reference to a secret that does not exist is refused now, not at the first login.
      if (ref !== null && !(await secretExists(ctx.services.store, ref)))
        throw errors.badRequest(`client_secret_ref: no secret named ${ref.slice('secret:'.length)} (PUT /v1/console/secrets first)`);
      const scopes = b.scopes ?? ['openid', 'email', 'profile'];
      if (!scopes.includes('openid')) throw errors.badRequest('scopes must include openid');
      const settings: SsoSettings = {
        issuer: b.issuer,
        client_id: b.client_id,
        client_secret_ref: ref,
        scopes,
        role_mapping: (b.role_mapping ?? []).map((r) => ({ ...r, tenant: r.tenant.toLowerCase() })),
        allowed_domains: (b.allowed_domains ?? []).map((d) => d.toLowerCase()),
        disable_password_login: b.disable_password_login ?? false,
        aal3_acr_values: b.aal3_acr_values ?? [],
        link_existing_accounts: b.link_existing_accounts ?? false,
        redirect_uris: (b.redirect_uris ?? []).map((u) => checkConfiguredRedirectUri(u)),
      };
      const now = nowTimestamp();
      await ctx.services.store.transaction(async (tx) => {
        const value = JSON.stringify(settings);
        const r = await tx.updateTable('console_settings').set({ value, updated_at: now }).where('key', '=', 'sso').executeTakeFirst();
        if (Number(r.numUpdatedRows) === 0)
          await tx.insertInto('console_settings').values({ key: 'sso', value, updated_at: now }).execute();
      });
      await ctx.audit(
        { kind: 'sso', id: settings.issuer },
        {
          client_id: settings.client_id,
          client_secret_ref: ref,
          scopes,
          allowed_domains: settings.allowed_domains,
          rules: settings.role_mapping.length,
          link_existing_accounts: settings.link_existing_accounts,
          redirect_uris: settings.redirect_uris,
        },
      );
      return { configured: true, settings, updated_at: now };
    },
  }),
  route({
    ...common,
    method: 'DELETE',
    path: '/v1/console/sso',
    operationId: 'deleteSso',
    summary: 'Remove the OpenID provider; SSO login stops at once (provisioned users keep their accounts)',
    audit: 'sso.remove',
    auditChain: 'system',
    status: 204,
    handler: async (ctx) => {
      const p = principalOf(ctx);
      const issuer = await ctx.services.store.transaction(async (tx) => {
        const row = await tx.selectFrom('console_settings').select('value').where('key', '=', 'sso').executeTakeFirst();
        if (!row) return null;
        await tx.deleteFrom('console_settings').where('key', '=', 'sso').execute();
        return (JSON.parse(row.value) as SsoSettings).issuer;
      });
      if (issuer === null) throw errors.notFound('sso configuration');
      await ctx.audit({ kind: 'sso', id: issuer });
      return reply.empty(204);
    },
  }),
  route({
    ...common,
    method: 'POST',
    path: '/v1/console/sso/test',
    operationId: 'testSso',
    summary: 'Fetch the provider’s discovery document and JWKS and check them, reporting each step',
    audit: 'sso.test',
    auditChain: 'system',
    response: TestAnswer,
    timeoutMs: 20_000,
    handler: async (ctx) => {
      const p = principalOf(ctx);
      const row = await readSetting<SsoSettings>(ctx.services, 'sso');
      if (!row) throw errors.notFound('sso configuration');
      const result = await testProvider(ctx.services, row.value);
      await ctx.audit(
        { kind: 'sso', id: row.value.issuer },
        { ok: result.ok, failed: result.steps.filter((x) => !x.ok).map((x) => x.step) },
      );
      return result;
    },
  }),
];
