/**
 * The `Authenticator` the HTTP core calls on every non-public route (src/http/app.ts): bearer
 * token → principal → rate limit → tenant → role check → policy decision point → privileged-read
 * audit. Deny by default: a permission the rules in roles.ts do not grant is refused.
 */
import { ApiError, errors } from '../contract/errors.js';
import type { CompiledRoute } from '../contract/registry.js';
import type { Authenticator } from '../http/app.js';
import type { RequestContext } from '../http/context.js';
import { bearerToken, resolveCredential } from './credentials.js';
import { grantIn, type Principal } from './principal.js';
import { rateLimitHeaders } from './rate-limit.js';
import { permissionRule, roleAtLeast, type PermissionRule, type Role } from './roles.js';
import { identityOf, type IdentityRuntime } from './runtime.js';
import { resolveTenant, tenantHeader } from './tenant-resolution.js';
import { currentAal } from './assurance.js';
import { cookieSessionToken } from './browser-session.js';

const SAFE_METHODS = new Set(['GET', 'HEAD']);

/** Build the authenticator; it reads the identity runtime from `ctx.services.identity`. */
export function createAuthenticator(): Authenticator {
  const rules = new WeakMap<CompiledRoute, PermissionRule>();
  return async (ctx, route) => {
    const runtime = identityOf(ctx.services);
    let rule = rules.get(route);
    if (!rule) {
      rule = permissionRule(route.spec.permission, route.spec.privileged);
      rules.set(route, rule);
    }
    const principal = await authenticate(runtime, ctx);
    const header = tenantHeader(ctx.headers);
    let tenant: string | undefined;
    let role: Role | undefined;
    if (rule.scope === 'system') {
      if (!principal.superadmin) throw errors.forbidden(`${rule.permission} is reserved to superadmins`);
    } else if (rule.resource === 'self') {
      // whoami, logout, refresh act on the credential itself; a (well-formed) tenant header is irrelevant.
    } else {
      tenant = resolveTenant(principal, header, rule.scope === 'tenant');
      if (tenant !== undefined) role = await roleIn(runtime, principal, tenant);
      if (rule.minRole && tenant !== undefined && !roleAtLeast(role as Role, rule.minRole)) {
        throw errors.forbidden(`missing permission ${rule.permission}`);
      }
      if (tenant !== undefined && !SAFE_METHODS.has(ctx.method) && rule.scope === 'tenant') {
        const info = await runtime.tenant(tenant);
        if (info?.status === 'suspended') throw new ApiError('tenant_suspended');
      }
    }
    const params = ctx.params as Record<string, string>;
    const decision = await runtime.pdp.decide({
      principal: {
        id: principal.actor,
        kind: principal.kind,
        userId: principal.userId,
        superadmin: principal.superadmin,
        role,
        aal: currentAal(principal),
      },
      action: rule.permission,
      resource: { kind: rule.resource, id: params['id'] ?? params['tenant_id'], tenant },
      context: { method: ctx.method, route: ctx.route, remoteAddress: ctx.remoteAddress, requestId: ctx.requestId },
    });
    if (decision !== 'allow') throw errors.forbidden(`denied by policy (${runtime.pdp.engine})`);
    const mutable = ctx as { principal?: Principal; tenant?: string };
    mutable.principal = principal;
    mutable.tenant = tenant;
    if (route.spec.privileged && tenant !== undefined) {
      // DECISIONS.md: each privileged read is audited, from its declaration; its handler does not record it.
      await ctx.audit({ kind: rule.resource, id: params['id'] ?? '' }, { route: ctx.route });
    }
  };
}

/**
 * Bearer → principal, then the per-principal rate limit; 401 / 429 otherwise. Without an
 * Authorization header, the console's session cookie stands in for it, CSRF-checked on
 * mutations (browser-session.ts); a bearer token always wins and is never CSRF-checked.
 */
async function authenticate(runtime: IdentityRuntime, ctx: RequestContext): Promise<Principal> {
  const authorization = ctx.headers['authorization'];
  const token = authorization === undefined ? cookieSessionToken(ctx.headers, ctx.method) : bearerToken(authorization);
  if (!token)
    throw new ApiError('unauthenticated', 'authentication required: send Authorization: Bearer <token>', {
      'www-authenticate': 'Bearer realm="svc"',
    });
  const principal = await resolveCredential(runtime, token);
  // One message for every failure (malformed, unknown, wrong secret, expired, revoked, disabled).
  if (!principal)
    throw new ApiError('unauthenticated', 'invalid or expired credential', {
      'www-authenticate': 'Bearer realm="svc", error="invalid_token"',
    });
  if (runtime.limiter.enabled) {
    const d = await runtime.limiter.take(principal.actor);
    const headers = rateLimitHeaders(d);
    if (!d.allowed) throw new ApiError('rate_limited', `rate limited: retry in ${d.resetSeconds} s`, headers);
    Object.assign(ctx.responseHeaders, headers);
  }
  return principal;
}

/** The principal's role in `tenant`: its grant, owner for a superadmin in any live tenant; 403/404 otherwise. */
export async function roleIn(runtime: IdentityRuntime, principal: Principal, tenant: string): Promise<Role> {
  const grant = grantIn(principal, tenant);
  if (grant) return grant.role;
  if (principal.superadmin && principal.boundTenant === null) {
    if (await runtime.tenant(tenant)) return 'owner';
    throw errors.notFound('tenant');
  }
  // The same answer whether or not the tenant exists: no existence oracle.
  throw errors.forbidden('no access to this tenant');
}
